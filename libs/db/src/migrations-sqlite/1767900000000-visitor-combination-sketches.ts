import { MigrationInterface, QueryRunner } from 'typeorm';
import { COMBINATION_SKETCHES_BY_COMBINATION } from '../migrations/1767900000000-visitor-combination-sketches';

/**
 * The SQLite form of MariaDB's VisitorCombinationSketches1767900000000 (libs/db/src/migrations):
 * the same table (BINARY(16) and MEDIUMBLOB → BLOB) and index, and every hour that already has sessions
 * queued for the next `aggregate`.
 */
export class SqliteVisitorCombinationSketches1767900000000 implements MigrationInterface {
  name = 'SqliteVisitorCombinationSketches1767900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_combination_sketches (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      attributes_hash BLOB NOT NULL,
      registers BLOB NOT NULL,
      PRIMARY KEY (site_id, bucket, attributes_hash)
    ) WITHOUT ROWID`);
    await q.query(
      `CREATE INDEX ${COMBINATION_SKETCHES_BY_COMBINATION} ON visitor_combination_sketches (site_id, attributes_hash, bucket)`,
    );
    await q.query(
      `INSERT OR IGNORE INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, substr(started_at, 1, 13) || ':00:00.000' FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_combination_sketches');
  }
}
