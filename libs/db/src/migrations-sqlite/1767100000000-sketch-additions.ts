import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's SketchAdditions1767100000000 (libs/db/src/migrations). */
export class SqliteSketchAdditions1767100000000 implements MigrationInterface {
  name = 'SqliteSketchAdditions1767100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE dirty_sketch_sessions (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      session_id TEXT NOT NULL,
      PRIMARY KEY (site_id, bucket, session_id)
    ) WITHOUT ROWID`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The code before this migration knows only rebuilds: the hours with sessions waiting to be
    // added are queued for one, so that none of those visitors is lost.
    await q.query(
      `INSERT OR IGNORE INTO dirty_sketch_hours (site_id, bucket) SELECT DISTINCT site_id, bucket FROM dirty_sketch_sessions`,
    );
    await q.query('DROP TABLE dirty_sketch_sessions');
  }
}
