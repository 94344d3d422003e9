import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions by their last hit: pageviews read through their sessions
 * (libs/stats/src/sql/pageviews-by-session.ts) need the sessions that started before a range
 * and end inside it, one index range instead of every earlier session of the site.
 */
export class SessionsByEnd1764900000000 implements MigrationInterface {
  name = 'SessionsByEnd1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD KEY ix_sessions_site_end (site_id, ended_at, started_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP KEY ix_sessions_site_end');
  }
}
