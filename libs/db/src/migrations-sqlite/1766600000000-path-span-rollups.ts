import { MigrationInterface, QueryRunner } from 'typeorm';
import { PATH_SPAN_ROLLUP, refillSpanRollups } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's PathSpanRollups1766600000000 (libs/db/src/migrations). */
export class SqlitePathSpanRollups1766600000000 implements MigrationInterface {
  name = 'SqlitePathSpanRollups1766600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_path_span_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('entry_path', 'exit_path')),
      span INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      path_hash BLOB NOT NULL,
      path TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, span, bucket, path_hash)
    ) WITHOUT ROWID`);
    await refillSpanRollups(q, { dialect, rollup: PATH_SPAN_ROLLUP });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_path_span_rollups');
  }
}
