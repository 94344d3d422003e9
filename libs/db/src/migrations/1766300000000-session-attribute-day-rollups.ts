import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The attribute rollup (every session attribute per row) by UTC day as well as by 15 minutes,
 * as session_day_rollups is to session_rollups. At 1M pageviews a 30-day range held 245k
 * 15-minute rows for 300k sessions: nearly a row per session, as few sessions share all five
 * values in one quarter hour. A day row gathers 2.7 times as many. Range totals and top lists
 * under filters on several attributes (or grouped by another attribute than the filtered one)
 * read their whole UTC days from here and the quarter hours around them from the 15-minute
 * rows. `aggregate` keeps both grains from the same deltas; this builds the day rows from the
 * 15-minute rows that exist already.
 */
export class SessionAttributeDayRollups1766300000000 implements MigrationInterface {
  name = 'SessionAttributeDayRollups1766300000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE session_attribute_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      attributes_hash BINARY(16) NOT NULL,
      channel VARCHAR(255) NOT NULL,
      source VARCHAR(255) NOT NULL,
      country VARCHAR(255) NOT NULL,
      device VARCHAR(255) NOT NULL,
      browser VARCHAR(255) NOT NULL,
      sessions INT NOT NULL,
      bounces INT NOT NULL,
      session_pageviews BIGINT NOT NULL,
      duration_seconds DECIMAL(18,3) NOT NULL,
      PRIMARY KEY (site_id, bucket, attributes_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    const day = 'CAST(DATE(bucket) AS DATETIME)';
    await q.query(
      `INSERT INTO session_attribute_day_rollups
         (site_id, bucket, attributes_hash, channel, source, country, device, browser,
          sessions, bounces, session_pageviews, duration_seconds)
       SELECT site_id, ${day}, attributes_hash, MIN(channel), MIN(source), MIN(country), MIN(device), MIN(browser),
         SUM(sessions), SUM(bounces), SUM(session_pageviews), SUM(duration_seconds)
       FROM session_attribute_rollups GROUP BY site_id, ${day}, attributes_hash`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_attribute_day_rollups');
  }
}
