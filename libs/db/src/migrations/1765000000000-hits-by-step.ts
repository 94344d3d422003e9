import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hits by what a goal or a funnel step matches (SPEC §1 "Goal match"): `step_key` is the
 * event's name or the pageview's path, cut to 255 characters, computed by the database (a
 * virtual column: nothing to import, nothing stored in the rows). Its index lists, per site,
 * the hits of one event name or one path, by visitor and time, with their session, so a
 * funnel step (by visitor), a goal (by session) or a page reads the hits that can match it,
 * from the index alone for names and paths up to 255 characters, instead of every hit of a
 * range, a visitor or a session. The definition that reads it is
 * libs/stats/src/definitions.ts `hitMatch`; STEP_KEY_CHARS there is this 255. `seq`, which
 * InnoDB would append anyway, is named before session_id so that a visitor's hits of one step
 * stay in hit order (ts, seq): a funnel step's first hit is the first index entry, no sort.
 */
export class HitsByStep1765000000000 implements MigrationInterface {
  name = 'HitsByStep1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE hits
      ADD COLUMN step_key VARCHAR(255) AS (CASE type WHEN 'event' THEN name WHEN 'pageview' THEN LEFT(path, 255) END) VIRTUAL,
      ADD KEY ix_hits_site_step (site_id, type, step_key, visitor_id, ts, seq, session_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE hits DROP KEY ix_hits_site_step, DROP COLUMN step_key');
  }
}
