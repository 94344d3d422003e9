import { attributeKeySql } from '@app/stats/rollups/session-rollup';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The attribute rollup (libs/stats/src/rollups/session-rollup.ts): per site, 15-minute UTC
 * bucket of the session start and combination of the five session attributes, the sessions'
 * counts. It answers filters on several attributes (SPEC §3) without reading sessions. Keyed
 * by the MD5 of the combination (five values of up to 255 characters exceed InnoDB's key
 * length); `aggregate` keeps it like session_rollups.
 */
export class SessionAttributeRollups1764700000000 implements MigrationInterface {
  name = 'SessionAttributeRollups1764700000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(`CREATE TABLE session_attribute_rollups (
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
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    const bucket = dialect.floorToQuarterHour('s.started_at');
    await q.query(
      `INSERT INTO session_attribute_rollups
         (site_id, bucket, attributes_hash, channel, source, country, device, browser,
          sessions, bounces, session_pageviews, duration_seconds)
       SELECT s.site_id, ${bucket}, UNHEX(MD5(${attributeKeySql('s')})),
         s.channel, s.source, s.country, s.device, s.browser,
         COUNT(*), SUM(s.is_bounce), SUM(s.pageviews), SUM(s.duration_seconds)
       FROM sessions s
       GROUP BY s.site_id, ${bucket}, s.channel, s.source, s.country, s.device, s.browser`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_attribute_rollups');
  }
}
