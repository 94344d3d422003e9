import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQLite form of MariaDB's VisitorSketches1765200000000 (libs/db/src/migrations): the
 * same two tables (ENUM → TEXT with a CHECK, MEDIUMBLOB → BLOB), and every hour that already
 * has sessions queued for the next `aggregate` (a file made before this migration).
 */
export class SqliteVisitorSketches1765200000000 implements MigrationInterface {
  name = 'SqliteVisitorSketches1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_sketches (
      site_id INTEGER NOT NULL,
      grain TEXT NOT NULL CHECK (grain IN ('hour', 'day')),
      bucket DATETIME NOT NULL,
      registers BLOB NOT NULL,
      PRIMARY KEY (site_id, grain, bucket)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE dirty_sketch_hours (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) WITHOUT ROWID`);
    await q.query(
      `INSERT INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, substr(started_at, 1, 13) || ':00:00.000' FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE dirty_sketch_hours');
    await q.query('DROP TABLE visitor_sketches');
  }
}
