import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Entry and exit pages of the session rollup: per site, 15-minute UTC bucket of the session
 * start and path, the sessions that entered or left there. Keyed by the path's MD5 because a
 * path runs to 2048 characters; `aggregate` keeps it like session_rollups.
 */
export class SessionPathRollups1764600000000 implements MigrationInterface {
  name = 'SessionPathRollups1764600000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // Values compare exactly, trailing spaces included (as every other table since ExactCollation).
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE session_path_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('entry_path','exit_path') NOT NULL,
      bucket DATETIME NOT NULL,
      path_hash BINARY(16) NOT NULL,
      path VARCHAR(2048) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, path_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    const bucket =
      "TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', started_at) / 15) * 15, '1970-01-01 00:00:00')";
    for (const dimension of ['entry_path', 'exit_path']) {
      await q.query(
        `INSERT INTO session_path_rollups (site_id, dimension, bucket, path_hash, path, sessions)
         SELECT site_id, '${dimension}', ${bucket}, UNHEX(MD5(${dimension})), ${dimension}, COUNT(*)
         FROM sessions WHERE ${dimension} IS NOT NULL GROUP BY site_id, ${bucket}, ${dimension}`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_path_rollups');
  }
}
