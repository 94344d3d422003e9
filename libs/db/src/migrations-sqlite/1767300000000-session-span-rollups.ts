import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillSpanRollups, SESSION_SPAN_ROLLUP } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's SessionSpanRollups1767300000000 (libs/db/src/migrations). */
export class SqliteSessionSpanRollups1767300000000 implements MigrationInterface {
  name = 'SqliteSessionSpanRollups1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_span_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      span INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, span, bucket, value)
    ) WITHOUT ROWID`);
    await refillSpanRollups(q, { dialect, rollup: SESSION_SPAN_ROLLUP });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_span_rollups');
  }
}
