import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillPairDayRollups } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's SessionPairDayRollups1766700000000 (libs/db/src/migrations). */
export class SqliteSessionPairDayRollups1766700000000 implements MigrationInterface {
  name = 'SqliteSessionPairDayRollups1766700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_pair_day_rollups (
      site_id INTEGER NOT NULL,
      attribute TEXT NOT NULL CHECK (attribute IN ('channel', 'source', 'country', 'device', 'browser')),
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'entry_path', 'exit_path')),
      value TEXT NOT NULL,
      bucket DATETIME NOT NULL,
      item_hash BLOB NOT NULL,
      item TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, attribute, dimension, value, bucket, item_hash)
    ) WITHOUT ROWID`);
    await refillPairDayRollups(q, { dialect });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_pair_day_rollups');
  }
}
