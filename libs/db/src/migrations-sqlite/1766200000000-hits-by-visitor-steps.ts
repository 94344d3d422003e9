import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's HitsByVisitorSteps1766200000000 (libs/db/src/migrations). */
export class SqliteHitsByVisitorSteps1766200000000 implements MigrationInterface {
  name = 'SqliteHitsByVisitorSteps1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_visitor');
    await q.query('CREATE INDEX ix_hits_site_visitor ON hits (site_id, visitor_id, ts, seq, type, step_key)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_visitor');
    await q.query('CREATE INDEX ix_hits_site_visitor ON hits (site_id, visitor_id, ts)');
  }
}
