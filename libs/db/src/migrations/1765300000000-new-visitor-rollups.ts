import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * New visitors by 15-minute UTC bucket of their first-ever session: the engagement report's
 * new visitors of a range (SPEC §4: first session in the range) as a sum over the range's
 * buckets instead of an index range of `visitors` (2.56M entries, 0.36 s, at 10M pageviews).
 * `aggregate` keeps it equal to the visitors table in the same transaction; this builds it for
 * the visitors that exist already.
 */
export class NewVisitorRollups1765300000000 implements MigrationInterface {
  name = 'NewVisitorRollups1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_first_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      visitors INT NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) ENGINE=InnoDB`);
    const bucket =
      "TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', first_session_at) / 15) * 15, '1970-01-01 00:00:00')";
    await q.query(
      `INSERT INTO visitor_first_rollups (site_id, bucket, visitors)
       SELECT site_id, ${bucket}, COUNT(*) FROM visitors GROUP BY site_id, ${bucket}`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_first_rollups');
  }
}
