import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { fillLiveHits } from '@app/stats/rollups/live-hits';

/**
 * The hits of the last hour, narrow, for realtime's 5-minute window (`live_hits`, kept by
 * `import` in each batch's transaction, copied from the rows it stored, and pruned at the start
 * of each import, which reads it whole: it holds about an hour of hits). Realtime read
 * the window's hits through `ix_hits_site_type_ts` and each one's row of `hits` by key for its
 * visitor and path, then grouped them by the 2,048-character path: at 10M pageviews a month, on
 * the busiest 5 minutes, 3.7 ms for the active visitors and 6.1 ms for the active pages. Read
 * from these rows in the order of their key, grouped by the path's MD5: 0.9 and 1.9 ms
 * (BENCHMARKS.md run AU). The migration fills it from the hits stamped in the last hour.
 */
export class LiveHits1767400000000 implements MigrationInterface {
  name = 'LiveHits1767400000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(`CREATE TABLE live_hits (
      site_id INT UNSIGNED NOT NULL,
      ts DATETIME(3) NOT NULL,
      hit_id VARCHAR(64) NOT NULL,
      type ENUM('pageview','event','purchase') NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      path_hash BINARY(16) NULL,
      path VARCHAR(2048) NULL,
      PRIMARY KEY (site_id, ts, hit_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await fillLiveHits(q, dialect, new Date());
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE live_hits');
  }
}
