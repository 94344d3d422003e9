import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The session rollup (libs/stats/src/rollups/session-rollup.ts): per site, attribute and value,
 * 15-minute UTC bucket of the session start, the sessions' counts. `aggregate` keeps it equal
 * to what the sessions table says, in the same transaction; this builds it for sessions that
 * exist already.
 */
export class SessionRollups1764400000000 implements MigrationInterface {
  name = 'SessionRollups1764400000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // Values compare exactly, trailing spaces included (as every other table since ExactCollation).
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE session_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      sessions INT NOT NULL,
      bounces INT NOT NULL,
      session_pageviews BIGINT NOT NULL,
      duration_seconds DECIMAL(18,3) NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    const bucket =
      "TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', started_at) / 15) * 15, '1970-01-01 00:00:00')";
    for (const dimension of ['channel', 'source', 'country', 'device', 'browser']) {
      await q.query(
        `INSERT INTO session_rollups (site_id, dimension, bucket, value, sessions, bounces, session_pageviews, duration_seconds)
         SELECT site_id, '${dimension}', ${bucket}, ${dimension}, COUNT(*), SUM(is_bounce), SUM(pageviews), SUM(duration_seconds)
         FROM sessions GROUP BY site_id, ${bucket}, ${dimension}`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_rollups');
  }
}
