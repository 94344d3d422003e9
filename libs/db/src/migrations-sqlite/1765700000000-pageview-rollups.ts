import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildPageviewRollups } from '../migrations/1765700000000-pageview-rollups';

/** The SQLite form of MariaDB's PageviewRollups1765700000000 (libs/db/src/migrations). */
export class SqlitePageviewRollups1765700000000 implements MigrationInterface {
  name = 'SqlitePageviewRollups1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_pageview_buckets (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      bucket DATETIME NOT NULL,
      pageviews INTEGER NOT NULL,
      PRIMARY KEY (site_id, session_id, bucket)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE pageview_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      pageviews INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await buildPageviewRollups(
      q,
      "strftime('%Y-%m-%d %H:%M:%f', (unixepoch(h.ts) / 900) * 900, 'unixepoch')",
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE pageview_rollups');
    await q.query('DROP TABLE session_pageview_buckets');
  }
}
