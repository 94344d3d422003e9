import { SESSION_PAGES } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `session_pages.visitor_first_at`: each row's copy of its visitor's first session, as
 * `sessions.visitor_first_at` keeps it (migration 1767800000000). Under a `page==` condition
 * engagement's returning split read each row's visitor by key in the visitors table: at 10M
 * pageviews under `page==/pricing`, 714k look-ups, 2.56 s of the report's 3.8 s (BENCHMARKS.md
 * run BR). `aggregate` copies it with the session's rows, which it writes once the chunk's first
 * sessions are set, and sets it again on the rows of every session of a visitor whose first
 * session the chunk moved (SessionAggregator.copyFirstSessions). Filled from the visitors table.
 */
export class SessionPageFirstSessions1769000000000 implements MigrationInterface {
  name = 'SessionPageFirstSessions1769000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN visitor_first_at DATETIME(3) NULL`);
    await q.query(
      `UPDATE ${SESSION_PAGES} sp JOIN visitors v ON v.site_id = sp.site_id AND v.visitor_id = sp.visitor_id
       SET sp.visitor_first_at = v.first_session_at`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN visitor_first_at`);
  }
}
