import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQLite form of MariaDB's VisitorValueSketches1766100000000 (libs/db/src/migrations): the
 * same table (ENUM → TEXT with a CHECK, MEDIUMBLOB → BLOB), and every hour that already has
 * sessions queued for the next `aggregate`.
 */
export class SqliteVisitorValueSketches1766100000000 implements MigrationInterface {
  name = 'SqliteVisitorValueSketches1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_value_sketches (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      grain TEXT NOT NULL CHECK (grain IN ('hour', 'day')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      registers BLOB NOT NULL,
      PRIMARY KEY (site_id, dimension, grain, bucket, value)
    ) WITHOUT ROWID`);
    await q.query(
      `INSERT OR IGNORE INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, substr(started_at, 1, 13) || ':00:00.000' FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_value_sketches');
  }
}
