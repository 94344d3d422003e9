import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Sessions added to a UTC hour since its visitor sketch was built (docs/decisions/visitor-sketches.md,
 * "Added, not rebuilt"). A HyperLogLog sketch can take an id but not give one back, so an hour
 * whose sessions only grew is its stored sketch merged with the new sessions' visitors, and its
 * day the stored day's merged with the same: `aggregate` queues such sessions here, in the
 * chunk's transaction, instead of the hour in `dirty_sketch_hours` (which stays the queue of
 * hours rebuilt from all their sessions, and their days from all their hours). Nothing to fill:
 * the hours already queued are rebuilt as before.
 */
export class SketchAdditions1767100000000 implements MigrationInterface {
  name = 'SketchAdditions1767100000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // The sessions' own collation: the queue is joined to them by session_id.
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE dirty_sketch_sessions (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      PRIMARY KEY (site_id, bucket, session_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The code before this migration knows only rebuilds: the hours with sessions waiting to be
    // added are queued for one, so that none of those visitors is lost.
    await q.query(
      `INSERT IGNORE INTO dirty_sketch_hours (site_id, bucket) SELECT DISTINCT site_id, bucket FROM dirty_sketch_sessions`,
    );
    await q.query('DROP TABLE dirty_sketch_sessions');
  }
}
