import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Visitor sketches (libs/stats/src/rollups/visitor-sketch.ts): a HyperLogLog sketch of the
 * visitor ids of each site's sessions by UTC hour and by UTC day of the session start, the
 * registers deflated. `aggregate` queues the hours whose sessions it re-derived in
 * `dirty_sketch_hours`, in the chunk's transaction, and rebuilds them (and their days) from the
 * sessions table once the sessions are derived; a report reads the sketches of a range only
 * when none of its hours is queued. The hashing is done in Node, so this migration queues
 * every hour that has sessions already and the next `aggregate` builds their sketches.
 */
export class VisitorSketches1765200000000 implements MigrationInterface {
  name = 'VisitorSketches1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_sketches (
      site_id INT UNSIGNED NOT NULL,
      grain ENUM('hour','day') NOT NULL,
      bucket DATETIME NOT NULL,
      registers MEDIUMBLOB NOT NULL,
      PRIMARY KEY (site_id, grain, bucket)
    ) ENGINE=InnoDB`);
    await q.query(`CREATE TABLE dirty_sketch_hours (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) ENGINE=InnoDB`);
    await q.query(
      `INSERT INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, DATE_FORMAT(started_at, '%Y-%m-%d %H:00:00') FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE dirty_sketch_hours');
    await q.query('DROP TABLE visitor_sketches');
  }
}
