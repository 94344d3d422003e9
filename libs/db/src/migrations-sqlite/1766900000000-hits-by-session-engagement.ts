import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's HitsBySessionEngagement1766900000000 (libs/db/src/migrations). */
export class SqliteHitsBySessionEngagement1766900000000 implements MigrationInterface {
  name = 'SqliteHitsBySessionEngagement1766900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_session');
    await q.query(
      'CREATE INDEX ix_hits_site_session ON hits (site_id, session_id, ts, seq, type, step_key, time_on_page_seconds, scroll_depth)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_session');
    await q.query('CREATE INDEX ix_hits_site_session ON hits (site_id, session_id, ts, seq, type, step_key)');
  }
}
