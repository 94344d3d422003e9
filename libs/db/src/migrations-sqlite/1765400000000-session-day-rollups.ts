import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's SessionDayRollups1765400000000 (libs/db/src/migrations). */
export class SqliteSessionDayRollups1765400000000 implements MigrationInterface {
  name = 'SqliteSessionDayRollups1765400000000';

  async up(q: QueryRunner): Promise<void> {
    // duration_seconds in milliseconds, as in session_rollups.
    await q.query(`CREATE TABLE session_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      bounces INTEGER NOT NULL,
      session_pageviews INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE session_path_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('entry_path', 'exit_path')),
      bucket DATETIME NOT NULL,
      path_hash BLOB NOT NULL,
      path TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, path_hash)
    ) WITHOUT ROWID`);
    const day = "substr(bucket, 1, 10) || ' 00:00:00.000'";
    await q.query(
      `INSERT INTO session_day_rollups (site_id, dimension, bucket, value, sessions, bounces, session_pageviews, duration_seconds)
       SELECT site_id, dimension, ${day}, value, SUM(sessions), SUM(bounces), SUM(session_pageviews), SUM(duration_seconds)
       FROM session_rollups GROUP BY site_id, dimension, ${day}, value`,
    );
    await q.query(
      `INSERT INTO session_path_day_rollups (site_id, dimension, bucket, path_hash, path, sessions)
       SELECT site_id, dimension, ${day}, path_hash, MIN(path), SUM(sessions)
       FROM session_path_rollups GROUP BY site_id, dimension, ${day}, path_hash`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_path_day_rollups');
    await q.query('DROP TABLE session_day_rollups');
  }
}
