import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildPageEventRollups } from '../migrations/1769200000000-page-event-rollups';

/** The SQLite form of MariaDB's PageEventRollups1769200000000 (libs/db/src/migrations). */
export class SqlitePageEventRollups1769200000000 implements MigrationInterface {
  name = 'SqlitePageEventRollups1769200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE page_event_rollups (
      site_id INTEGER NOT NULL,
      page_key TEXT NOT NULL,
      bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      occurrences INTEGER NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, page_key, bucket, name)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE page_event_links (
      site_id INTEGER NOT NULL,
      page_key TEXT NOT NULL,
      to_bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, page_key, to_bucket, name, from_bucket)
    ) WITHOUT ROWID`);
    await buildPageEventRollups(q);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['page_event_links', 'page_event_rollups']) await q.query(`DROP TABLE ${table}`);
  }
}
