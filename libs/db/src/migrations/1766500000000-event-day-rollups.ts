import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { refillEventDayRollups } from '@app/stats/rollups/day-refill';

/**
 * The event rollups by the site's local day. A 30-day events report read about 29,000
 * event_rollups rows at 1M pageviews (ten names in each of 2,880 quarter hours) and grouped
 * them by name; it now reads one row per name and site day (event_day_rollups) and the quarter
 * hours around them. A day row's sessions are the sessions with hits of the name that day; the
 * links between two days (event_day_links, by 15-minute bucket as event_links) let a range of
 * days count a session that spans midnight once. `aggregate` keeps both from its deltas
 * (eventDayDeltas); this fills them from the 15-minute rows that exist.
 */
export class EventDayRollups1766500000000 implements MigrationInterface {
  name = 'EventDayRollups1766500000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE event_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      occurrences INT NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, bucket, name)
    ) ${table}`);
    await q.query(`CREATE TABLE event_day_links (
      site_id INT UNSIGNED NOT NULL,
      to_bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, to_bucket, name, from_bucket)
    ) ${table}`);
    await refillEventDayRollups(q, { dialect });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE event_day_links');
    await q.query('DROP TABLE event_day_rollups');
  }
}
