import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's NewVisitorRollups1765300000000 (libs/db/src/migrations). */
export class SqliteNewVisitorRollups1765300000000 implements MigrationInterface {
  name = 'SqliteNewVisitorRollups1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_first_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      visitors INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) WITHOUT ROWID`);
    const bucket = "strftime('%Y-%m-%d %H:%M:%f', (unixepoch(first_session_at) / 900) * 900, 'unixepoch')";
    await q.query(
      `INSERT INTO visitor_first_rollups (site_id, bucket, visitors)
       SELECT site_id, ${bucket}, COUNT(*) FROM visitors GROUP BY site_id, ${bucket}`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_first_rollups');
  }
}
