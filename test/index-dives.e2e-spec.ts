import { SESSION_SETTINGS } from '@app/db/mysql-driver';
import { deriveSessionsStatement } from '@app/ingest/session-aggregator';
import { pageview } from './support/hits';
import { describeOnServer, TestEnv } from './support/test-env';

const SESSIONS = 1_000;
const LISTED = 300;

interface PlanRow {
  table: string;
  type: string;
  key: string | null;
  rows: number | string;
}

/**
 * A plan, not a time. With a list of more than 200 keys (`eq_range_index_dive_limit`'s
 * default) MariaDB estimates the list's rows from an average rows-per-key of its statistics,
 * and for one busy site among many small ones that average is far off: the statement that
 * derives a chunk's sessions then read every hit of the site (`ref` on site_id) instead of
 * the listed sessions. Our connections look each key up instead (SESSION_SETTINGS).
 *
 * The statistics are written, not sampled, so that the plan does not depend on which pages
 * MariaDB sampled: the engine-independent statistics of the session index (MariaDB's
 * mysql.index_stats, read by default) say 5,000 hits per session. Skipped on the embedded
 * engine: SQLite has neither the setting nor these statistics.
 */
describeOnServer('IN lists planned from the index, not from sampled averages (MySQL family)', () => {
  let env: TestEnv;
  let site: number;

  beforeAll(async () => {
    env = await TestEnv.create();
    site = await env.site();
    const hits = Array.from({ length: SESSIONS }, (_, s) =>
      [0, 1].map((h) =>
        pageview(site, `s${s}`, new Date(Date.UTC(2026, 2, 1) + s * 60_000 + h * 1_000).toISOString(), '/'),
      ),
    ).flat();
    // A few small sites beside it, as in any multi-tenant table.
    for (let n = 0; n < 10; n++)
      hits.push(pageview(await env.site(), 'only', '2026-03-01T12:00:00.000Z', '/'));
    const summary = await env.importHits(hits);
    expect(summary.rejections).toEqual([]);
    await env.ds.query('ANALYZE TABLE hits PERSISTENT FOR COLUMNS () INDEXES (ix_hits_site_session)');
    await env.ds.query(
      `UPDATE mysql.index_stats SET avg_frequency = 5000
       WHERE db_name = DATABASE() AND table_name = 'hits' AND index_name = 'ix_hits_site_session' AND prefix_arity = 2`,
    );
    // Opened again, the table reads the statistics just written.
    await env.ds.query('FLUSH TABLES hits');
  });
  afterAll(() => env.close());

  const derivePlan = async (prefix = ''): Promise<PlanRow> => {
    const listed = Array.from({ length: LISTED }, (_, s) => `s${s * 3}`);
    const statement = deriveSessionsStatement(env.dialect, new Map([[site, listed]]));
    const plan = await env.ds.query<PlanRow[]>(`${prefix}EXPLAIN ${statement.sql}`, [
      ...statement.parameters,
    ]);
    // `h`: the hits grouped into sessions, the statement's one read of a range of hits.
    const row = plan.find((r) => r.table === 'h');
    expect(row).toBeDefined();
    return row!;
  };

  it("a connection of the CLI's (import, aggregate) looks each key of a long list up", async () => {
    expect(SESSION_SETTINGS).toMatch(/eq_range_index_dive_limit = 0/);
    const [{ limit }] = await env.ds.query<Array<{ limit: number | string }>>(
      'SELECT @@eq_range_index_dive_limit AS `limit`',
    );
    expect(Number(limit)).toBe(0);
  });

  it("derives a chunk's sessions from the listed sessions' hits, not from every hit of the site", async () => {
    // Without the setting these statistics make the site's whole range look cheaper.
    const averaged = await derivePlan('SET STATEMENT eq_range_index_dive_limit = 200 FOR ');
    expect(averaged.type).toBe('ref');

    const row = await derivePlan();
    expect(row).toMatchObject({ type: 'range', key: 'ix_hits_site_session' });
    // Two hits per listed session, as the index says (the site has 2,000).
    expect(Number(row.rows)).toBeLessThanOrEqual(LISTED * 2);
  });
});
