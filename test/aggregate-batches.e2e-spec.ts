import { Sql } from '@app/db';
import { MAX_IN_LIST, siteBatches } from '@app/ingest/rollup-writer';
import { lockQueuedStatement, SessionAggregator } from '@app/ingest/session-aggregator';
import { event, pageview, purchase } from './support/hits';
import { random } from './support/random';
import { TEST_ENGINE, TestEnv } from './support/test-env';

const ZONES = [
  'America/New_York',
  'Asia/Kathmandu',
  'Europe/Berlin',
  'UTC',
  'Asia/Kolkata',
  'Pacific/Chatham',
];
const PATHS = ['/', '/pricing', '/blog/a', '/products/1', '/products/2', '/thank-you'];
const START = Date.parse('2026-03-27T00:00:00Z');
const SPAN_MS = 36 * 3_600_000;

/**
 * A few sessions of each site, most of them small (as an hour of traffic over many small sites),
 * in two imports: the second adds hits before and after known ones (a new start, first hit,
 * attributes, bounce) and new sessions, so the second `aggregate` derives sessions again.
 */
function hitsOf(siteId: number, seed: number): object[][] {
  const rnd = random(seed);
  const imports: object[][] = [[], []];
  for (let s = 0; s < 6 + seed * 5; s++) {
    const session = `s${s}`;
    const visitor = `v${rnd.int(0, 6)}`;
    const start = START + Math.floor(rnd.next() * SPAN_MS);
    for (let h = 0; h < rnd.int(1, 5); h++) {
      const ts = new Date(start + h * rnd.int(10, 900) * 1000 - (h > 0 && rnd.next() < 0.3 ? 3_600_000 : 0));
      const o = {
        visitor_id: visitor,
        country: rnd.pick(['DE', 'US', 'NP']),
        device: rnd.pick(['desktop', 'mobile']),
        channel: rnd.pick(['Direct', 'Organic Search']),
      };
      const kind = rnd.next();
      const hit =
        kind < 0.65
          ? pageview(siteId, session, ts.toISOString(), rnd.pick(PATHS), {
              ...o,
              time_on_page_seconds: rnd.int(0, 120),
              scroll_depth: rnd.int(0, 100),
            })
          : kind < 0.9
            ? event(siteId, session, ts.toISOString(), rnd.pick(['signup', 'play']), o)
            : purchase(siteId, session, ts.toISOString(), `o${s}-${h}`, `${rnd.int(1, 9999) / 100}`, {
                ...o,
                items: [
                  { sku: rnd.pick(['A', 'B']), name: `Item ${s}`, quantity: rnd.int(1, 3), price: '4.25' },
                ],
              });
      imports[h === 0 && rnd.next() < 0.7 ? 0 : 1].push(hit);
    }
  }
  return imports;
}

/** Every row `aggregate` keeps, table by table, in a comparable form (bytes as hex, rows sorted). */
async function derivedRows(env: TestEnv): Promise<Record<string, string[]>> {
  const tables = (await env.tableNames())
    .filter(
      (t) =>
        /(_rollups|_links|_sketches|_buckets)$/.test(t) ||
        ['sessions', 'visitors', 'session_goals', 'dirty_sessions', 'dirty_sketch_hours'].includes(t),
    )
    .sort();
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await env.ds.query<Array<Record<string, unknown>>>(`SELECT * FROM ${table}`);
    out[table] = rows
      .map((r) =>
        JSON.stringify(
          Object.entries(r)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [
              k,
              Buffer.isBuffer(v) ? v.toString('hex') : v instanceof Date ? v.toISOString() : String(v),
            ]),
        ),
      )
      .sort();
  }
  return out;
}

/**
 * `aggregate` derives the sessions of many sites in one pass (every statement reads or writes
 * all their sessions): it must write exactly the rows it writes deriving them one site at a time.
 */
describe('aggregate: several sites in one pass', () => {
  const envs: TestEnv[] = [];

  afterAll(async () => {
    for (const env of envs) await env.close();
  });

  /**
   * The fixture in a fresh database, aggregated in chunks of `chunkSize` sessions after each of
   * its two imports, or (`once`) imported whole and aggregated once.
   */
  async function derive(
    chunkSize: number | undefined,
    once = false,
  ): Promise<{ rows: Record<string, string[]>; sessions: number }> {
    const env = await TestEnv.create();
    envs.push(env);
    const aggregator = new SessionAggregator(env.ds, { dialect: env.dialect } as Sql);
    const siteIds: number[] = [];
    for (const zone of ZONES) {
      const id = await env.site({ timezone: zone });
      siteIds.push(id);
      await env.registerEvent(id, 'signup');
      await env.goal(id, 'Signed up', 'event', 'signup');
      await env.goal(id, 'Read a product', 'path', '/products/*');
    }
    const fixtures = siteIds.map((id, i) => hitsOf(id, i + 1));
    let sessions = 0;
    for (const batch of once ? [[0, 1]] : [[0], [1]]) {
      const summary = await env.importHits(fixtures.flatMap((f) => batch.flatMap((i) => f[i])));
      expect(summary.rejections).toEqual([]);
      sessions += (await aggregator.run(undefined, chunkSize)).sessions;
    }
    return { rows: await derivedRows(env), sessions };
  }

  it('writes the same rows with every site in one pass as one session at a time', async () => {
    const alone = await derive(1);
    const together = await derive(undefined);
    expect(together.sessions).toBe(alone.sessions);
    expect(Object.keys(together.rows)).toEqual(Object.keys(alone.rows));
    for (const table of Object.keys(alone.rows)) {
      expect({ table, rows: together.rows[table] }).toEqual({ table, rows: alone.rows[table] });
    }
    // Not a vacuous comparison: the fixture fills the rollups, and sessions were derived again.
    expect(together.rows.sessions.length).toBeGreaterThan(50);
    expect(together.sessions).toBeGreaterThan(together.rows.sessions.length);
    for (const table of [
      'goal_rollups',
      'event_rollups',
      'revenue_rollups',
      'visitor_value_sketches',
      'visitor_combination_sketches',
    ])
      expect(together.rows[table].length).toBeGreaterThan(0);
  }, 120_000);

  /**
   * Each aggregate rebuilds the hours its sessions touched and their days from the other hours:
   * after two imports, each aggregated (sessions moved to other hours, new sessions in hours that
   * had sketches), every sketch and every other row is what one aggregate of all the hits builds.
   */
  it('keeps the same rows aggregating each import as aggregating them all at once', async () => {
    const stepwise = await derive(undefined);
    const once = await derive(undefined, true);
    for (const table of Object.keys(once.rows)) {
      expect({ table, rows: stepwise.rows[table] }).toEqual({ table, rows: once.rows[table] });
    }
    expect(once.rows.visitor_sketches.length).toBeGreaterThan(20);
  }, 120_000);

  /**
   * The most sites a statement lists: MAX_IN_LIST sites of one session each, one batch. SQLite
   * refuses an expression nested 1,000 deep (each site is one more OR), and MariaDB must still
   * read each listed session by key.
   */
  it('derives a batch of MAX_IN_LIST sites of one session each, locking the queue by key', async () => {
    const env = await TestEnv.create();
    envs.push(env);
    const siteIds: number[] = [];
    for (let i = 0; i < MAX_IN_LIST; i++) siteIds.push(await env.site({ timezone: ZONES[i % ZONES.length] }));
    const summary = await env.importHits(
      siteIds.map((id, i) =>
        pageview(id, `one-${i}`, new Date(START + i * 60_000).toISOString(), '/', { visitor_id: `v${i}` }),
      ),
    );
    expect(summary.rejections).toEqual([]);
    const batch = new Map(siteIds.map((id, i) => [id, [`one-${i}`]]));
    const lock = lockQueuedStatement(env.dialect, batch);
    if (TEST_ENGINE === 'sqlite') {
      const plan = (
        await env.ds.query<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${lock.sql}`, lock.parameters)
      ).map((r) => r.detail);
      expect(plan.filter((line) => /^SCAN dirty_sessions/.test(line))).toEqual([]);
    } else {
      // Every listed session read by key, though they are the whole queue: OR-ed into one
      // condition, MariaDB reads the queue through (type 'index'), locking every row it holds.
      const plan = await env.ds.query<
        Array<{ table: string | null; type: string | null; key: string | null }>
      >(`EXPLAIN ${lock.sql}`, lock.parameters);
      const reads = plan.filter((r) => r.table === 'dirty_sessions');
      expect(reads).toHaveLength(MAX_IN_LIST);
      for (const read of reads)
        expect(read).toMatchObject({ type: expect.stringMatching(/^(const|range|ref)$/), key: 'PRIMARY' });
    }
    const run = await new SessionAggregator(env.ds, { dialect: env.dialect } as Sql).run();
    expect(run).toMatchObject({ sessions: MAX_IN_LIST, chunks: 1, remaining: 0 });
    const rows = await env.ds.query<Array<{ site_id: number | string; session_id: string }>>(
      'SELECT site_id, session_id FROM sessions',
    );
    expect(rows.map((r) => `${Number(r.site_id)} ${r.session_id}`).sort()).toEqual(
      siteIds.map((id, i) => `${id} one-${i}`).sort(),
    );
  }, 120_000);

  it('batches several sites together, each site at most once per batch and its lists under MAX_IN_LIST', () => {
    const ids = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const batches = [
      ...siteBatches([
        [1, ids(3, 'a')],
        [2, ids(5, 'b')],
        [3, ids(1000, 'c')],
        [4, ids(2, 'd')],
      ]),
    ];
    expect(batches.map((b) => [...b].map(([site, list]) => [site, list.length]))).toEqual([
      [
        [1, 3],
        [2, 5],
        [3, 500],
      ],
      [
        [3, 500],
        [4, 2],
      ],
    ]);
  });
});
