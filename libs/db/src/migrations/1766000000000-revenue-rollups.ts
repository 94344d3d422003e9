import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { buildSessionBucketRollups } from './1765700000000-pageview-rollups';

/**
 * Orders and revenue by session attribute (SPEC §1: an order belongs to the range of its own
 * ts and, broken down by a session attribute, takes its session's), as the pageview rollup
 * does for pageviews: `revenue_rollups` per attribute, value and 15-minute UTC bucket of the
 * order ts; `session_order_buckets` per derived session, its orders and revenue by bucket as
 * `aggregate` last saw them. Breakdown `revenue` read every order of the range with its
 * session (636 ms at 10M pageviews).
 */
export class RevenueRollups1766000000000 implements MigrationInterface {
  name = 'RevenueRollups1766000000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE session_order_buckets (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      bucket DATETIME NOT NULL,
      orders INT NOT NULL,
      revenue DECIMAL(20,2) NOT NULL,
      PRIMARY KEY (site_id, session_id, bucket)
    ) ${table}`);
    await q.query(`CREATE TABLE revenue_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      orders INT NOT NULL,
      revenue DECIMAL(20,2) NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ${table}`);
    await buildRevenueRollups(q, dialect.floorToQuarterHour('h.ts'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE revenue_rollups');
    await q.query('DROP TABLE session_order_buckets');
  }
}

/** Fills both tables from the derived sessions' orders (`bucket`: the engine's quarter hour of `h.ts`). */
export async function buildRevenueRollups(q: QueryRunner, bucket: string): Promise<void> {
  await buildSessionBucketRollups(q, {
    store: 'session_order_buckets',
    rollup: 'revenue_rollups',
    from: 'orders h',
    sums: { orders: 'COUNT(*)', revenue: 'SUM(h.revenue)' },
    bucket,
  });
}
