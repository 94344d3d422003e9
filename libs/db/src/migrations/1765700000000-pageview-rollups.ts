import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Pageviews by session attribute (SPEC §1: a pageview belongs to the range of its own ts and,
 * broken down by a session attribute, takes its session's): `pageview_rollups` per attribute,
 * value and 15-minute UTC bucket of the pageview's ts; `session_pageview_buckets` per derived
 * session, its pageviews by bucket as `aggregate` last saw them (what it subtracts when the
 * session's hits or attributes change). This builds both from the derived sessions' pageviews.
 */
export class PageviewRollups1765700000000 implements MigrationInterface {
  name = 'PageviewRollups1765700000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE session_pageview_buckets (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      bucket DATETIME NOT NULL,
      pageviews INT NOT NULL,
      PRIMARY KEY (site_id, session_id, bucket)
    ) ${table}`);
    await q.query(`CREATE TABLE pageview_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      pageviews INT NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ${table}`);
    await buildPageviewRollups(q, dialect.floorToQuarterHour('h.ts'));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE pageview_rollups');
    await q.query('DROP TABLE session_pageview_buckets');
  }
}

/** Fills both tables from the derived sessions' pageviews (`bucket`: the engine's quarter hour of `h.ts`). */
export async function buildPageviewRollups(q: QueryRunner, bucket: string): Promise<void> {
  await buildSessionBucketRollups(q, {
    store: 'session_pageview_buckets',
    rollup: 'pageview_rollups',
    from: 'hits h',
    only: "h.type = 'pageview'",
    sums: { pageviews: 'COUNT(*)' },
    bucket,
  });
}

/**
 * Fills a per-session store and its rollup by session attribute (libs/stats/src/rollups/
 * session-bucket-rollup.ts) from the source rows of the derived sessions: `from` is the source
 * aliased `h` (a site_id, session_id and ts each), `only` a condition on its rows, `sums` the
 * aggregate of each summed column over them, `bucket` the quarter hour of `h.ts`.
 */
export async function buildSessionBucketRollups(
  q: QueryRunner,
  t: {
    store: string;
    rollup: string;
    from: string;
    only?: string;
    sums: Record<string, string>;
    bucket: string;
  },
): Promise<void> {
  const columns = Object.keys(t.sums);
  await q.query(
    `INSERT INTO ${t.store} (site_id, session_id, bucket, ${columns.join(', ')})
       SELECT h.site_id, h.session_id, ${t.bucket}, ${Object.values(t.sums).join(', ')} FROM ${t.from}
       WHERE ${t.only ? `${t.only} AND ` : ''}EXISTS (SELECT 1 FROM sessions s WHERE s.site_id = h.site_id AND s.session_id = h.session_id)
       GROUP BY h.site_id, h.session_id, ${t.bucket}`,
  );
  for (const dimension of ['channel', 'source', 'country', 'device', 'browser']) {
    await q.query(
      `INSERT INTO ${t.rollup} (site_id, dimension, bucket, value, ${columns.join(', ')})
         SELECT b.site_id, '${dimension}', b.bucket, s.${dimension}, ${columns.map((c) => `SUM(b.${c})`).join(', ')}
         FROM ${t.store} b JOIN sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id
         GROUP BY b.site_id, b.bucket, s.${dimension}`,
    );
  }
}
