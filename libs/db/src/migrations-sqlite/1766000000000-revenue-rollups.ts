import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildRevenueRollups } from '../migrations/1766000000000-revenue-rollups';
import { sqliteDialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's RevenueRollups1766000000000 (libs/db/src/migrations); money in cents. */
export class SqliteRevenueRollups1766000000000 implements MigrationInterface {
  name = 'SqliteRevenueRollups1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_order_buckets (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      bucket DATETIME NOT NULL,
      orders INTEGER NOT NULL,
      revenue INTEGER NOT NULL,
      PRIMARY KEY (site_id, session_id, bucket)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE revenue_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      orders INTEGER NOT NULL,
      revenue INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await buildRevenueRollups(q, sqliteDialect.floorToQuarterHour('h.ts'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE revenue_rollups');
    await q.query('DROP TABLE session_order_buckets');
  }
}
