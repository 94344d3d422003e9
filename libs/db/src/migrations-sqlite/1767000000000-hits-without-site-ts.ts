import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's HitsWithoutSiteTs1767000000000 (libs/db/src/migrations). */
export class SqliteHitsWithoutSiteTs1767000000000 implements MigrationInterface {
  name = 'SqliteHitsWithoutSiteTs1767000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_hits_site_ts');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX ix_hits_site_ts ON hits (site_id, ts)');
  }
}
