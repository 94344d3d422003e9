import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The events report by rollup (SPEC §4 `/events`: event hits whose own ts is in the range,
 * and the distinct sessions they belong to), for every event name, registered or not, so that
 * registering an event later needs nothing rebuilt:
 *
 * - `session_event_buckets`: per session and name, its event hits by 15-minute UTC bucket, as
 *   `aggregate` last saw them (what it subtracts when the session gets new hits);
 * - `event_rollups`: per name and bucket, the hits and the sessions with hits in it;
 * - `event_links`: per name, the sessions whose consecutive buckets with hits are
 *   (`from_bucket`, `to_bucket`). A session with hits in k buckets of a range has k − 1 links
 *   inside it, so the distinct sessions of a range are Σ sessions − Σ links within it.
 *
 * This builds all three from the event hits that exist already.
 */
export class EventRollups1765600000000 implements MigrationInterface {
  name = 'EventRollups1765600000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE session_event_buckets (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      name VARCHAR(255) NOT NULL,
      bucket DATETIME NOT NULL,
      hits INT NOT NULL,
      PRIMARY KEY (site_id, session_id, name, bucket)
    ) ${table}`);
    await q.query(`CREATE TABLE event_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      occurrences INT NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, bucket, name)
    ) ${table}`);
    await q.query(`CREATE TABLE event_links (
      site_id INT UNSIGNED NOT NULL,
      to_bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, to_bucket, name, from_bucket)
    ) ${table}`);
    await buildEventRollups(q, dialect.floorToQuarterHour('ts'));
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['event_links', 'event_rollups', 'session_event_buckets']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}

/**
 * Fills the three tables from the event hits there are (both engines: `bucket` is the engine's
 * quarter hour of `ts`); the links from a LAG() window over each session's buckets.
 */
export async function buildEventRollups(q: QueryRunner, bucket: string): Promise<void> {
  await q.query(
    `INSERT INTO session_event_buckets (site_id, session_id, name, bucket, hits)
       SELECT site_id, session_id, name, ${bucket}, COUNT(*) FROM hits WHERE type = 'event'
       GROUP BY site_id, session_id, name, ${bucket}`,
  );
  await q.query(
    `INSERT INTO event_rollups (site_id, bucket, name, occurrences, sessions)
       SELECT site_id, bucket, name, SUM(hits), COUNT(*) FROM session_event_buckets GROUP BY site_id, bucket, name`,
  );
  await q.query(
    `INSERT INTO event_links (site_id, to_bucket, name, from_bucket, sessions)
       SELECT site_id, bucket, name, previous, COUNT(*) FROM (
         SELECT site_id, name, bucket, LAG(bucket) OVER (PARTITION BY site_id, session_id, name ORDER BY bucket) AS previous
         FROM session_event_buckets
       ) x WHERE previous IS NOT NULL GROUP BY site_id, bucket, name, previous`,
  );
}
