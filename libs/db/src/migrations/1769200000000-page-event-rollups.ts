import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * `page_event_rollups` and `page_event_links`: event_rollups and event_links (migration
 * 1765600000000) once for each page key, over the sessions with a pageview of it (their rows in
 * session_pages). A session's event buckets count under each of its page keys, so one key's rows
 * count the event hits and sessions of the sessions `page==` that path selects (SPEC §3), read by
 * 15-minute bucket as the unfiltered rollups are (events.queries.ts); queued sessions are read
 * from their hits on top. `aggregate` keeps them with the event rollups
 * (EventRollupBuilder, pageEventRollupDeltas). Filled here from session_pages and
 * session_event_buckets, which `aggregate` writes in the same transaction.
 */
export class PageEventRollups1769200000000 implements MigrationInterface {
  name = 'PageEventRollups1769200000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialectForServerVersion(v).exactCollation}`;
    await q.query(`CREATE TABLE page_event_rollups (
      site_id INT UNSIGNED NOT NULL,
      page_key VARCHAR(255) NOT NULL,
      bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      occurrences INT NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, page_key, bucket, name)
    ) ${table}`);
    await q.query(`CREATE TABLE page_event_links (
      site_id INT UNSIGNED NOT NULL,
      page_key VARCHAR(255) NOT NULL,
      to_bucket DATETIME NOT NULL,
      name VARCHAR(255) NOT NULL,
      from_bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, page_key, to_bucket, name, from_bucket)
    ) ${table}`);
    await buildPageEventRollups(q);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['page_event_links', 'page_event_rollups']) await q.query(`DROP TABLE ${table}`);
  }
}

/** Fills both tables from session_pages and session_event_buckets (both engines). */
export async function buildPageEventRollups(q: QueryRunner): Promise<void> {
  await q.query(
    `INSERT INTO page_event_rollups (site_id, page_key, bucket, name, occurrences, sessions)
       SELECT p.site_id, p.page_key, b.bucket, b.name, SUM(b.hits), COUNT(*)
       FROM session_pages p JOIN session_event_buckets b ON b.site_id = p.site_id AND b.session_id = p.session_id
       GROUP BY p.site_id, p.page_key, b.bucket, b.name`,
  );
  await q.query(
    `INSERT INTO page_event_links (site_id, page_key, to_bucket, name, from_bucket, sessions)
       SELECT p.site_id, p.page_key, x.bucket, x.name, x.previous, COUNT(*)
       FROM session_pages p JOIN (
         SELECT site_id, session_id, name, bucket,
           LAG(bucket) OVER (PARTITION BY site_id, session_id, name ORDER BY bucket) AS previous
         FROM session_event_buckets
       ) x ON x.site_id = p.site_id AND x.session_id = p.session_id
       WHERE x.previous IS NOT NULL
       GROUP BY p.site_id, p.page_key, x.bucket, x.name, x.previous`,
  );
}
