import { MigrationInterface, QueryRunner } from 'typeorm';
import { fillLiveHits } from '@app/stats/rollups/live-hits';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's LiveHits1767400000000 (libs/db/src/migrations). */
export class SqliteLiveHits1767400000000 implements MigrationInterface {
  name = 'SqliteLiveHits1767400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE live_hits (
      site_id INTEGER NOT NULL,
      ts DATETIME NOT NULL,
      hit_id TEXT NOT NULL,
      type TEXT NOT NULL CHECK (type IN ('pageview', 'event', 'purchase')),
      visitor_id TEXT NOT NULL,
      path_hash BLOB NULL,
      path TEXT NULL,
      PRIMARY KEY (site_id, ts, hit_id)
    ) WITHOUT ROWID`);
    await fillLiveHits(q, dialect, new Date());
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE live_hits');
  }
}
