import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `site_session_bounds`: per site, an upper bound of its sessions' durations (the longest
 * `duration_seconds` `aggregate` has written; it never shrinks). A session that runs past an
 * instant started at most that long before it, so under filters the few selected sessions that
 * cross the range's start or end are read from the last stretch of sessions before it
 * (`s.started_at >= instant - longest`) instead of every selected session of the range or
 * every session since the site's first (pageviews-by-session.ts, crossing). `aggregate` raises
 * it in the transaction that writes the sessions; this fills it from them.
 */
export class SiteSessionBounds1768100000000 implements MigrationInterface {
  name = 'SiteSessionBounds1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE site_session_bounds (
      site_id INT UNSIGNED NOT NULL,
      longest_seconds DECIMAL(18,3) NOT NULL,
      PRIMARY KEY (site_id)
    ) ENGINE=InnoDB`);
    await q.query(
      `INSERT INTO site_session_bounds (site_id, longest_seconds)
       SELECT site_id, MAX(duration_seconds) FROM sessions GROUP BY site_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE site_session_bounds');
  }
}
