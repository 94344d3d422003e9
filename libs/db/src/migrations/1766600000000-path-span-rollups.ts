import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { PATH_SPAN_ROLLUP, refillSpanRollups } from '@app/stats/rollups/day-refill';

/**
 * Entry and exit pages by blocks of 4, 16 and 64 site days (daySpanParts). The overview's two
 * path lists summed about 28,000 day rows each over 30 days at 1M pageviews (a thousand paths
 * a day) and more at 10M; a range now reads its whole aligned blocks from these rows and only
 * the days around them from session_path_day_rollups, a few rows per path. A block's bucket is
 * the start of its first site day; `aggregate` keeps the rows from the day deltas; this sums
 * them from the day rows that exist.
 */
export class PathSpanRollups1766600000000 implements MigrationInterface {
  name = 'PathSpanRollups1766600000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(`CREATE TABLE session_path_span_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('entry_path','exit_path') NOT NULL,
      span TINYINT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      path_hash BINARY(16) NOT NULL,
      path VARCHAR(2048) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, dimension, span, bucket, path_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await refillSpanRollups(q, { dialect, rollup: PATH_SPAN_ROLLUP });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_path_span_rollups');
  }
}
