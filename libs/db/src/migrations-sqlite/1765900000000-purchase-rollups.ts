import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildPurchaseRollups } from '../migrations/1765900000000-purchase-rollups';
import { sqliteDialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's PurchaseRollups1765900000000 (libs/db/src/migrations). */
export class SqlitePurchaseRollups1765900000000 implements MigrationInterface {
  name = 'SqlitePurchaseRollups1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN purchased INTEGER NOT NULL DEFAULT 0');
    await q.query(`CREATE TABLE purchase_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) WITHOUT ROWID`);
    await buildPurchaseRollups(q, sqliteDialect);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE purchase_rollups');
    await q.query('ALTER TABLE sessions DROP COLUMN purchased');
  }
}
