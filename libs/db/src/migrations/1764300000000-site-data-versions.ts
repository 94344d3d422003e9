import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * A counter per site, bumped in the same transaction as every import batch and aggregation
 * chunk that changes the site's data. Report caches key on it, so a cached answer can never
 * outlive the data it was computed from.
 */
export class SiteDataVersions1764300000000 implements MigrationInterface {
  name = 'SiteDataVersions1764300000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // Values compare exactly, trailing spaces included (as every other table since ExactCollation).
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE site_data_versions (
      site_id INT UNSIGNED NOT NULL,
      version BIGINT UNSIGNED NOT NULL,
      changed_at DATETIME(3) NOT NULL,
      PRIMARY KEY (site_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE site_data_versions');
  }
}
