import { MigrationInterface, QueryRunner } from 'typeorm';
import { buildEventRollups } from '../migrations/1765600000000-event-rollups';

/** The SQLite form of MariaDB's EventRollups1765600000000 (libs/db/src/migrations). */
export class SqliteEventRollups1765600000000 implements MigrationInterface {
  name = 'SqliteEventRollups1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_event_buckets (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      name TEXT NOT NULL,
      bucket DATETIME NOT NULL,
      hits INTEGER NOT NULL,
      PRIMARY KEY (site_id, session_id, name, bucket)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE event_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      occurrences INTEGER NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket, name)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE event_links (
      site_id INTEGER NOT NULL,
      to_bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, to_bucket, name, from_bucket)
    ) WITHOUT ROWID`);
    await buildEventRollups(q, "strftime('%Y-%m-%d %H:%M:%f', (unixepoch(ts) / 900) * 900, 'unixepoch')");
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['event_links', 'event_rollups', 'session_event_buckets']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
