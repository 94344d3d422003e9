import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each stored goal of a session (`session_goals`) carries the session's start, and an index
 * by site and start: conversions and the breakdown's conv_rate under filters read the stored
 * goals of the sessions that started in the range (storedConvertedRows). By the primary key
 * alone they read every stored goal of the site, of its whole history, and each one's session
 * by key to find its start: a 7-day range of a site with a year of data read 52 weeks of
 * them. `aggregate` writes the start with the goals, in the transaction that derives the
 * session again; the migration copies it from the sessions, and drops the rows of sessions
 * that no longer exist (nothing reads them: every statement joins the session).
 */
export class SessionGoalStarts1767500000000 implements MigrationInterface {
  name = 'SessionGoalStarts1767500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE session_goals ADD COLUMN started_at DATETIME(3) NULL');
    await q.query(
      `UPDATE session_goals sg JOIN sessions s ON s.site_id = sg.site_id AND s.session_id = sg.session_id
       SET sg.started_at = s.started_at`,
    );
    await q.query('DELETE FROM session_goals WHERE started_at IS NULL');
    await q.query(
      `ALTER TABLE session_goals MODIFY started_at DATETIME(3) NOT NULL,
       ADD KEY ix_session_goals_site_start (site_id, started_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE session_goals DROP KEY ix_session_goals_site_start, DROP COLUMN started_at');
  }
}
