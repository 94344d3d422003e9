import { mariadbDialect } from '@app/db/dialect';
import { resolveRange, StatsQuery } from '@app/stats';
import { funnelStatements } from '../apps/api/src/analytics/funnel.queries';
import type { FunnelStep } from '../apps/api/src/analytics/funnel-steps';
import { event, pageview } from './support/hits';
import { TEST_ENGINE, TestEnv } from './support/test-env';

/**
 * The funnel statement when its temporary tables outgrow memory, as a busy site's do.
 * MariaDB 10.11 drops a row of a recursive CTE whose work table converts to disk mid-way
 * (MDEV-40803). The funnel was one: on the benchmark's 1M-pageview database with 1 MB
 * in-memory temporary tables it counted 50,033 visitors at step 2 instead of 50,034. Which
 * row is lost depends on the data, and this small fixture does not happen to lose one to it;
 * what the test holds is that the statement, run on a connection whose in-memory temporary
 * tables convert at sizes from 16 KB to 1 MB, gives what a plain reading of SPEC §4 gives on
 * a thousand attempts and more.
 */

/** A small seeded generator, so the fixture is the same on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Hit {
  visitor: string;
  ts: number;
  /** Import order: ties of ts are broken by it (hit order, SPEC §1). */
  order: number;
  type: 'pageview' | 'event';
  value: string;
}

const STEPS: FunnelStep[] = [
  { type: 'pageview', path: '/products/*' },
  { type: 'event', name: 'add_to_cart' },
  { type: 'pageview', path: '/checkout' },
];
const WINDOW_HOURS = 24;
/** 303 characters: longer than hits.step_key keeps. */
const LONG = '/l/' + 'x'.repeat(300);
const LONG_PATHS = [LONG, `${LONG}a`, LONG.slice(0, 255), `${LONG.slice(0, 254)}y`, `${LONG.slice(0, 260)}z`];
/** Patterns longer than, and as long as, step_key: prefix, exact, prefix, exact. */
const LONG_STEPS: FunnelStep[] = [
  { type: 'pageview', path: `${LONG.slice(0, 260)}*` },
  { type: 'pageview', path: LONG },
  { type: 'pageview', path: `${LONG.slice(0, 255)}*` },
  { type: 'pageview', path: LONG.slice(0, 255) },
];
const FROM = Date.parse('2026-05-01T00:00:00Z');
const DAYS = 5;

function matches(hit: Hit, step: FunnelStep): boolean {
  if (step.type === 'event') return hit.type === 'event' && hit.value === step.name;
  if (hit.type !== 'pageview') return false;
  return step.path.endsWith('*') ? hit.value.startsWith(step.path.slice(0, -1)) : hit.value === step.path;
}

/** SPEC §4 as written: every step-1 hit in the range starts an attempt; visitors per reached step. */
function expectedFunnel(hits: Hit[], rangeStart: number, rangeEnd: number, steps = STEPS): number[] {
  const byVisitor = new Map<string, Hit[]>();
  for (const h of hits) byVisitor.set(h.visitor, [...(byVisitor.get(h.visitor) ?? []), h]);
  const reached = steps.map(() => new Set<string>());
  for (const [visitor, list] of byVisitor) {
    list.sort((a, b) => a.ts - b.ts || a.order - b.order);
    list.forEach((first, i) => {
      if (!matches(first, steps[0]) || first.ts < rangeStart || first.ts >= rangeEnd) return;
      const deadline = first.ts + WINDOW_HOURS * 3_600_000;
      reached[0].add(visitor);
      let at = i;
      for (let k = 1; k < steps.length; k++) {
        const next = list.findIndex((h, j) => j > at && h.ts <= deadline && matches(h, steps[k]));
        if (next < 0) break;
        reached[k].add(visitor);
        at = next;
      }
    });
  }
  return reached.map((s) => s.size);
}

describe('funnel against SPEC §4 computed in TypeScript, temporary tables spilled to disk on MariaDB', () => {
  let env: TestEnv;
  let query: StatsQuery;
  let hits: Hit[];

  beforeAll(async () => {
    env = await TestEnv.create();
    const siteId = await env.site({ timezone: 'UTC' });
    const rnd = random(40803);
    const pick = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)];
    hits = [];
    const rows: object[] = [];
    for (let v = 0; v < 1500; v++) {
      const visitor = `v${v}`;
      let ts = FROM + Math.floor(rnd() * DAYS * 86_400_000);
      const n = 2 + Math.floor(rnd() * 7);
      for (let h = 0; h < n; h++) {
        // Steps in and out of order, some at the same millisecond, some a day or more apart.
        ts += rnd() < 0.15 ? 0 : rnd() < 0.1 ? 20 * 3_600_000 : Math.floor(rnd() * 600_000);
        // Most visitors make one attempt (their first hit), so a lost row shows in the counts;
        // every fifth makes several.
        const kind = h === 0 ? 0 : v % 5 === 0 ? rnd() : 0.45 + rnd() * 0.55;
        const hit: Hit =
          kind < 0.45
            ? {
                visitor,
                ts,
                order: hits.length,
                type: 'pageview',
                value: pick(['/products/a', '/products/b', '/products']),
              }
            : kind < 0.7
              ? {
                  visitor,
                  ts,
                  order: hits.length,
                  type: 'event',
                  value: pick(['add_to_cart', 'add_to_cart ', 'share']),
                }
              : {
                  visitor,
                  ts,
                  order: hits.length,
                  type: 'pageview',
                  value: pick(['/checkout', '/', '/checkout/x']),
                };
        hits.push(hit);
        const session = `${visitor}-${Math.floor(ts / 86_400_000)}`;
        const iso = new Date(ts).toISOString();
        rows.push(
          hit.type === 'event'
            ? event(siteId, session, iso, hit.value, { visitor_id: visitor })
            : pageview(siteId, session, iso, hit.value, { visitor_id: visitor }),
        );
      }
    }
    // Paths longer than the 255 characters of hits.step_key, and paths that share them.
    for (let v = 0; v < 60; v++) {
      const visitor = `long${v}`;
      let ts = Date.parse('2026-05-02T06:00:00Z') + v * 60_000;
      for (let h = 0; h < 6; h++) {
        ts += rnd() < 0.2 ? 0 : Math.floor(rnd() * 600_000);
        const hit: Hit = { visitor, ts, order: hits.length, type: 'pageview', value: pick(LONG_PATHS) };
        hits.push(hit);
        rows.push(
          pageview(siteId, `${visitor}-s`, new Date(ts).toISOString(), hit.value, { visitor_id: visitor }),
        );
      }
    }
    // One import, in the order above: seq follows `order`.
    const summary = await env.importHits(rows);
    expect(summary.rejections).toEqual([]);
    query = {
      site: { id: siteId, timezone: 'UTC', currency: 'USD', trackingMode: 'full' },
      range: resolveRange({ from: '2026-05-02', to: '2026-05-04', siteTimezone: 'UTC', maxDays: 731 }),
      filters: [],
    };
  });

  afterAll(() => env.close());

  // From every table converting at once to one converting in the middle of the walk.
  it('counts every attempt as SPEC §4 computed here does', async () => {
    const expected = expectedFunnel(hits, query.range.startUtc.getTime(), query.range.endUtc.getTime());
    const compiled = env.dialect.renderIndexHints(
      funnelStatements.visitorsPerStep(query, STEPS, WINDOW_HOURS)(env.dialect),
    );
    const [row] = await env.ds.query<Array<Record<string, unknown>>>(compiled.sql, [...compiled.parameters]);
    expect(STEPS.map((_, i) => Number(row[`step_${i + 1}`]))).toEqual(expected);
  });

  // MariaDB's in-memory temporary tables; SQLite has no such limit to spill past.
  (TEST_ENGINE === 'sqlite' ? it.skip : it).each([16, 64, 128, 256, 512, 1024])(
    'counts every attempt when in-memory temporary tables hold %i KB',
    async (kilobytes) => {
      const expected = expectedFunnel(hits, query.range.startUtc.getTime(), query.range.endUtc.getTime());
      // The fixture is big enough to matter: a thousand attempts and more, every step reached by some.
      expect(hits.filter((h) => matches(h, STEPS[0])).length).toBeGreaterThan(1000);
      expect(expected[2]).toBeGreaterThan(0);

      const compiled = mariadbDialect.renderIndexHints(
        funnelStatements.visitorsPerStep(query, STEPS, WINDOW_HOURS)(mariadbDialect),
      );
      const runner = env.ds.createQueryRunner();
      try {
        await runner.query('SET SESSION max_heap_table_size = ?, tmp_table_size = ?', [
          kilobytes * 1024,
          kilobytes * 1024,
        ]);
        const [row] = (await runner.query(compiled.sql, [...compiled.parameters])) as Array<
          Record<string, unknown>
        >;
        expect(STEPS.map((_, i) => Number(row[`step_${i + 1}`]))).toEqual(expected);
      } finally {
        await runner.release();
      }
    },
  );

  it('matches paths longer than the 255 characters of step_key exactly', async () => {
    const expected = expectedFunnel(
      hits,
      query.range.startUtc.getTime(),
      query.range.endUtc.getTime(),
      LONG_STEPS,
    );
    expect(expected[0]).toBeGreaterThan(expected[3]);
    expect(expected[3]).toBeGreaterThan(0);
    const compiled = env.dialect.renderIndexHints(
      funnelStatements.visitorsPerStep(query, LONG_STEPS, WINDOW_HOURS)(env.dialect),
    );
    const [row] = await env.ds.query<Array<Record<string, unknown>>>(compiled.sql, [...compiled.parameters]);
    expect(LONG_STEPS.map((_, i) => Number(row[`step_${i + 1}`]))).toEqual(expected);
  });
});
