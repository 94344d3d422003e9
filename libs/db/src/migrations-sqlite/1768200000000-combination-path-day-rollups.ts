import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillCombinationPathDayRollups } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's CombinationPathDayRollups1768200000000 (libs/db/src/migrations). */
export class SqliteCombinationPathDayRollups1768200000000 implements MigrationInterface {
  name = 'SqliteCombinationPathDayRollups1768200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_combination_path_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('entry_path', 'exit_path')),
      attributes_hash BLOB NOT NULL,
      bucket DATETIME NOT NULL,
      path_hash BLOB NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, attributes_hash, bucket, path_hash)
    ) WITHOUT ROWID`);
    await refillCombinationPathDayRollups(q, { dialect });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_combination_path_day_rollups');
  }
}
