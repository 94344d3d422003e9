import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillEventDayRollups } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's EventDayRollups1766500000000 (libs/db/src/migrations). */
export class SqliteEventDayRollups1766500000000 implements MigrationInterface {
  name = 'SqliteEventDayRollups1766500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE event_day_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      occurrences INTEGER NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket, name)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE event_day_links (
      site_id INTEGER NOT NULL,
      to_bucket DATETIME NOT NULL,
      name TEXT NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, to_bucket, name, from_bucket)
    ) WITHOUT ROWID`);
    await refillEventDayRollups(q, { dialect });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE event_day_links');
    await q.query('DROP TABLE event_day_rollups');
  }
}
