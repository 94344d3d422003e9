import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's SessionAttributeDayRollups1766300000000 (libs/db/src/migrations). */
export class SqliteSessionAttributeDayRollups1766300000000 implements MigrationInterface {
  name = 'SqliteSessionAttributeDayRollups1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_attribute_day_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      attributes_hash BLOB NOT NULL,
      channel TEXT NOT NULL,
      source TEXT NOT NULL,
      country TEXT NOT NULL,
      device TEXT NOT NULL,
      browser TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      bounces INTEGER NOT NULL,
      session_pageviews INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket, attributes_hash)
    ) WITHOUT ROWID`);
    const day = "substr(bucket, 1, 10) || ' 00:00:00.000'";
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
