import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's HitsBySessionSteps1766800000000 (libs/db/src/migrations). */
export class SqliteHitsBySessionSteps1766800000000 implements MigrationInterface {
  name = 'SqliteHitsBySessionSteps1766800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_session');
    await q.query('CREATE INDEX ix_hits_site_session ON hits (site_id, session_id, ts, seq, type, step_key)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_session');
    await q.query('CREATE INDEX ix_hits_site_session ON hits (site_id, session_id, ts, seq)');
  }
}
