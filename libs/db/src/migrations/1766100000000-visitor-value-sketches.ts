import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Visitor sketches by session attribute (libs/stats/src/rollups/visitor-sketch.ts): beside the
 * site's sketch of each UTC hour and day (visitor_sketches), one per attribute and value of the
 * sessions starting in it, so the visitors of a range filtered on one attribute (SPEC §3) are
 * the merge of the matching values' sketches. `aggregate` rebuilds them with the site's sketches
 * from the hours it queues in `dirty_sketch_hours`; the hashing is done in Node, so this
 * migration queues every hour that has sessions and the next `aggregate` builds both. Until then
 * a report finds the hours queued and counts visitors exactly, as before.
 */
export class VisitorValueSketches1766100000000 implements MigrationInterface {
  name = 'VisitorValueSketches1766100000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    // Values compare exactly, trailing spaces included (as session_rollups).
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE visitor_value_sketches (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      grain ENUM('hour','day') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      registers MEDIUMBLOB NOT NULL,
      PRIMARY KEY (site_id, dimension, grain, bucket, value)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    await q.query(
      `INSERT IGNORE INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, DATE_FORMAT(started_at, '%Y-%m-%d %H:00:00') FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_value_sketches');
  }
}
