import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { refillSpanRollups, SESSION_SPAN_ROLLUP } from '@app/stats/rollups/day-refill';

/**
 * The sessions of each attribute value by blocks of 4, 16 and 64 site days, as
 * session_path_span_rollups is to the entry and exit pages. The overview's attribute lists
 * summed a row per value and day: at 10M pageviews 12,252 day rows for the `source` list alone
 * (410 values × 30 days), grouped in a temporary table, the larger part of the overview's
 * attribute statement (BENCHMARKS.md run AT). A range now reads its whole aligned blocks from
 * these rows and only the days around them from session_day_rollups. A block's bucket is the
 * start of its first site day; `aggregate` keeps the rows from the day deltas; this sums them
 * from the day rows that exist.
 */
export class SessionSpanRollups1767300000000 implements MigrationInterface {
  name = 'SessionSpanRollups1767300000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(`CREATE TABLE session_span_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      span TINYINT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, dimension, span, bucket, value)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await refillSpanRollups(q, { dialect, rollup: SESSION_SPAN_ROLLUP });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_span_rollups');
  }
}
