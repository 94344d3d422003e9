import { SESSION_ENGAGEMENT_COLUMNS, sessionEngagementRows } from '@app/stats/sql/session-engagement';
import { sql } from 'kysely';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/** ix_sessions_site_combination's columns before this migration, and the ones it adds. */
export const COMBINATION_INDEX_BEFORE = [
  'site_id',
  'attributes_hash',
  'started_at',
  'visitor_id',
  'ended_at',
  'pageviews',
  'entry_hash',
  'exit_hash',
] as const;
export const COMBINATION_INDEX = [
  ...COMBINATION_INDEX_BEFORE,
  'visitor_first_at',
  ...SESSION_ENGAGEMENT_COLUMNS,
];

/**
 * What engagement reads of a session under filters, kept in its row:
 *
 * - its pageviews' engagement sums (SESSION_ENGAGEMENT_COLUMNS: pageviews with a time on page,
 *   their sum, pageviews per scroll-depth bucket), so that a session holding all its pageviews
 *   in the range gives its time on page and scroll depth without its hits;
 * - `visitor_first_at`, its visitor's first session as the visitors table holds it, so that the
 *   returning split counts the selected sessions' visitors without looking each one up.
 *
 * Both join `ix_sessions_site_combination`, which the filtered statements read the selected
 * sessions from. `aggregate` writes them with the session (deriveSessionsStatement) and sets the
 * first session again on every session of a visitor whose first session it sets or moves, in
 * the same transaction (copyFirstSessions). The migration fills them from the hits and the
 * visitors.
 */
export class SessionsEngagement1767800000000 implements MigrationInterface {
  name = 'SessionsEngagement1767800000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const d = dialectForServerVersion(v);
    // Counts, but the sum of seconds, typed as hit_rollups types it.
    const type = (c: string) => (c === 'time_on_page_seconds' ? 'DECIMAL(20,3)' : 'INT UNSIGNED');
    await q.query(
      `ALTER TABLE sessions
       ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `ADD COLUMN ${c} ${type(c)} NOT NULL DEFAULT 0`).join(', ')},
       ADD COLUMN visitor_first_at DATETIME(3) NULL`,
    );
    const rows = sessionEngagementRows(sql`1 = 1`).compile(d.builder).sql;
    await q.query(
      `UPDATE sessions s JOIN (${rows}) e ON e.site_id = s.site_id AND e.session_id = s.session_id
       SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `s.${c} = e.${c}`).join(', ')}`,
    );
    await q.query(
      `UPDATE sessions s JOIN visitors v ON v.site_id = s.site_id AND v.visitor_id = s.visitor_id
       SET s.visitor_first_at = v.first_session_at`,
    );
    await q.query(
      `ALTER TABLE sessions DROP KEY ix_sessions_site_combination,
       ADD KEY ix_sessions_site_combination (${COMBINATION_INDEX.join(', ')})`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sessions DROP KEY ix_sessions_site_combination,
       ADD KEY ix_sessions_site_combination (${COMBINATION_INDEX_BEFORE.join(', ')}),
       ${[...SESSION_ENGAGEMENT_COLUMNS, 'visitor_first_at'].map((c) => `DROP COLUMN ${c}`).join(', ')}`,
    );
  }
}
