import { SESSION_PAGES_BY_SESSION } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `session_pages` (libs/stats/src/sql/session-pages.ts): each derived session once for every
 * path it has a pageview of, keyed by site, path (as hits.step_key keeps it), start and session,
 * with the columns deriving it writes, as the sessions table types them, and the entry and exit
 * pages' hashes generated as there (migration 1767700000000). A request under
 * `page==` one path reads the range's sessions of that path as one range of the key, where the
 * sessions table tests each session of the range against its hits. `aggregate` writes a session's
 * rows with its row in `sessions`; migration 1768800000000, which adds each row's prior page, fills
 * them from the derived sessions and their pageviews (this one did, before it: its fill now
 * writes that column too).
 */
export class SessionPages1768700000000 implements MigrationInterface {
  name = 'SessionPages1768700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_pages (
      site_id INT UNSIGNED NOT NULL,
      page_key VARCHAR(255) NOT NULL,
      started_at DATETIME(3) NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      ended_at DATETIME(3) NOT NULL,
      hits INT UNSIGNED NOT NULL,
      pageviews INT UNSIGNED NOT NULL,
      events INT UNSIGNED NOT NULL,
      purchases INT UNSIGNED NOT NULL,
      is_bounce TINYINT(1) NOT NULL,
      duration_seconds DECIMAL(14,3) NOT NULL,
      entry_path VARCHAR(2048) NULL,
      exit_path VARCHAR(2048) NULL,
      channel VARCHAR(255) NOT NULL,
      source VARCHAR(255) NOT NULL,
      country VARCHAR(255) NOT NULL,
      device VARCHAR(255) NOT NULL,
      browser VARCHAR(255) NOT NULL,
      purchased TINYINT(1) NOT NULL,
      timed_pageviews INT UNSIGNED NOT NULL,
      time_on_page_seconds DECIMAL(20,3) NOT NULL,
      scroll_0_24 INT UNSIGNED NOT NULL,
      scroll_25_49 INT UNSIGNED NOT NULL,
      scroll_50_74 INT UNSIGNED NOT NULL,
      scroll_75_100 INT UNSIGNED NOT NULL,
      entry_hash BINARY(16) AS (UNHEX(MD5(entry_path))) VIRTUAL,
      exit_hash BINARY(16) AS (UNHEX(MD5(exit_path))) VIRTUAL,
      PRIMARY KEY (site_id, page_key, started_at, session_id),
      KEY ${SESSION_PAGES_BY_SESSION} (site_id, session_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_pages');
  }
}
