import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The index a report reads the selected combinations' days through (a range of days per
 * combination); `aggregate` writes a day's rows through the primary key.
 */
export const COMBINATION_SKETCHES_BY_COMBINATION = 'ix_visitor_combination_sketches_combination';

/**
 * Visitor sketches by combination of the five session attributes (docs/decisions/visitor-sketches.md,
 * "By combination of attributes"): one per site, UTC day of the session start and combination
 * (the sessions' `attributes_hash`), so that the visitors of a range under conditions on several
 * attributes are the merge of the selected combinations' day sketches. `aggregate` rebuilds a
 * day's from all its sessions whenever it brings that day's sketches up to date; the hashing is
 * done in Node, so this migration queues every hour that has sessions and the next `aggregate`
 * builds them. Until then a report finds the hours queued and counts visitors exactly.
 */
export class VisitorCombinationSketches1767900000000 implements MigrationInterface {
  name = 'VisitorCombinationSketches1767900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE visitor_combination_sketches (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      attributes_hash BINARY(16) NOT NULL,
      registers MEDIUMBLOB NOT NULL,
      PRIMARY KEY (site_id, bucket, attributes_hash),
      KEY ${COMBINATION_SKETCHES_BY_COMBINATION} (site_id, attributes_hash, bucket)
    ) ENGINE=InnoDB`);
    await q.query(
      `INSERT IGNORE INTO dirty_sketch_hours (site_id, bucket)
       SELECT DISTINCT site_id, DATE_FORMAT(started_at, '%Y-%m-%d %H:00:00') FROM sessions`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE visitor_combination_sketches');
  }
}
