import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQLite form of MariaDB's SiteSessionBounds1768100000000 (libs/db/src/migrations): the same
 * table, the duration in milliseconds as every SQLite seconds column.
 */
export class SqliteSiteSessionBounds1768100000000 implements MigrationInterface {
  name = 'SqliteSiteSessionBounds1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE site_session_bounds (
      site_id INTEGER NOT NULL PRIMARY KEY,
      longest_seconds INTEGER NOT NULL
    )`);
    await q.query(
      `INSERT INTO site_session_bounds (site_id, longest_seconds)
       SELECT site_id, MAX(duration_seconds) FROM sessions GROUP BY site_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE site_session_bounds');
  }
}
