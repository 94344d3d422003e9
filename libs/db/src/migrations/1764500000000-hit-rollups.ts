import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The pageview rollup: per site and 15-minute UTC bucket of the hit's own ts, the pageview
 * counts that do not depend on the session (pageviews, time on page, scroll depth). `import`
 * adds each batch's new hits in the batch's transaction; this builds it for hits that exist.
 */
export class HitRollups1764500000000 implements MigrationInterface {
  name = 'HitRollups1764500000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // Values compare exactly, trailing spaces included (as every other table since ExactCollation).
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE hit_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      pageviews INT NOT NULL,
      timed_pageviews INT NOT NULL,
      time_on_page_seconds DECIMAL(20,3) NOT NULL,
      scroll_0_24 INT NOT NULL,
      scroll_25_49 INT NOT NULL,
      scroll_50_74 INT NOT NULL,
      scroll_75_100 INT NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    const bucket =
      "TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', ts) / 15) * 15, '1970-01-01 00:00:00')";
    await q.query(
      `INSERT INTO hit_rollups
       SELECT site_id, ${bucket}, COUNT(*), COUNT(time_on_page_seconds), COALESCE(SUM(time_on_page_seconds), 0),
         COALESCE(SUM(scroll_depth BETWEEN 0 AND 24), 0), COALESCE(SUM(scroll_depth BETWEEN 25 AND 49), 0),
         COALESCE(SUM(scroll_depth BETWEEN 50 AND 74), 0), COALESCE(SUM(scroll_depth BETWEEN 75 AND 100), 0)
       FROM hits WHERE type = 'pageview' GROUP BY site_id, ${bucket}`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE hit_rollups');
  }
}
