import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildOrderRollups } from '../migrations/1765800000000-order-rollups';
import { sqliteDialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's OrderRollups1765800000000 (libs/db/src/migrations); money in cents. */
export class SqliteOrderRollups1765800000000 implements MigrationInterface {
  name = 'SqliteOrderRollups1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE order_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      orders INTEGER NOT NULL,
      revenue INTEGER NOT NULL,
      items INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) WITHOUT ROWID`);
    for (const name of ['item_rollups', 'item_day_rollups']) {
      await q.query(`CREATE TABLE ${name} (
        site_id INTEGER NOT NULL,
        bucket DATETIME NOT NULL,
        sku TEXT NOT NULL,
        quantity INTEGER NOT NULL,
        revenue INTEGER NOT NULL,
        orders INTEGER NOT NULL,
        PRIMARY KEY (site_id, bucket, sku)
      ) WITHOUT ROWID`);
    }
    await q.query('CREATE INDEX ix_item_rollups_sku ON item_rollups (site_id, sku, bucket)');
    await buildOrderRollups(q, sqliteDialect);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE item_day_rollups');
    await q.query('DROP TABLE item_rollups');
    await q.query('DROP TABLE order_rollups');
  }
}
