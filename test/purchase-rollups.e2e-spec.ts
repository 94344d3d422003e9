import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser } from '@app/stats';
import request from 'supertest';
import { EcommerceService } from '../apps/api/src/ecommerce/ecommerce.service';
import { pageview, purchase } from './support/hits';
import { random } from './support/random';
import { deriveSessionsStatement } from '@app/ingest/session-aggregator';
import { TEST_ENGINE, TestEnv } from './support/test-env';

const DAY_MS = 86_400_000;
const QUARTER_MS = 900_000;
const MARCH = Date.parse('2026-03-01T00:00:00Z');

interface FixtureHit {
  session: string;
  ts: number;
  /** A purchase's order id; none for a pageview. */
  order?: string;
}

/**
 * 90 sessions of March 2026, a third of them with an order. The second import (not
 * aggregated at first) gives some sessions an order, some an earlier first hit (their start
 * moves to another quarter hour or day), and one a purchase repeating another session's order
 * id (which stays that session's order).
 */
function fixture(): FixtureHit[][] {
  const rnd = random(47);
  const imports: FixtureHit[][] = [[], []];
  for (let n = 0; n < 90; n++) {
    const session = `ps-${n}`;
    const start = MARCH + rnd.int(0, 29) * DAY_MS + rnd.int(0, 95) * QUARTER_MS + rnd.int(0, 899_999);
    imports[0].push({ session, ts: start });
    imports[0].push({ session, ts: start + rnd.int(1, 40) * 60_000 });
    if (n % 3 === 0) imports[0].push({ session, ts: start + 45 * 60_000, order: `o-${n}` });
    if (n % 5 === 1) imports[1].push({ session, ts: start + 50 * 60_000, order: `o-${n}-late` });
    if (n % 7 === 2) imports[1].push({ session, ts: start - rnd.int(1, 600) * 60_000 });
  }
  imports[1].push({ session: 'ps-4', ts: MARCH + 9 * DAY_MS, order: 'o-3' });
  return imports;
}

/**
 * The purchase rollup (issue #10): purchasing sessions by quarter hour of their start, kept by
 * `aggregate`, with the sessions queued since read on top; e-commerce's purchasing_sessions and
 * conversion_rate read it.
 */
describe('Purchase rollup', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  const imports = fixture();
  const imported: FixtureHit[] = [];

  const importHits = async (hits: FixtureHit[]) => {
    const lines = hits.map((h) =>
      h.order
        ? purchase(site.id, h.session, new Date(h.ts).toISOString(), h.order, '10.00')
        : pageview(site.id, h.session, new Date(h.ts).toISOString(), '/'),
    );
    expect((await env.importHits(lines)).rejections).toEqual([]);
    imported.push(...hits);
  };

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'Europe/Berlin', members: [user] });
    site = { id, timezone: 'Europe/Berlin', currency: 'USD', trackingMode: 'full' };
    await importHits(imports[0]);
    await env.aggregate();
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const RANGES = [
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-03-10', to: '2026-03-12' },
    { from: '2026-03-20', to: '2026-03-20' },
  ];

  const purchasing = async (range: object) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}/ecommerce`)
      .query(range)
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    const data = res.body.data as { purchasing_sessions: number; conversion_rate: number };
    return { purchasing_sessions: data.purchasing_sessions, conversion_rate: data.conversion_rate };
  };
  const raw = async (range: { from: string; to: string }) => {
    const report = await app
      .get(EcommerceService)
      .report({ ...(await app.get(StatsQueryParser).parse(site, range)), tables: 'raw' }, { limit: 10 });
    return {
      purchasing_sessions: report.data.purchasing_sessions,
      conversion_rate: report.data.conversion_rate,
    };
  };

  /** Purchasing sessions by quarter hour of their start, from the hits imported so far. */
  const expectedRollup = () => {
    const owner = new Map<string, string>();
    const start = new Map<string, number>();
    for (const h of imported) {
      start.set(h.session, Math.min(start.get(h.session) ?? Infinity, h.ts));
      if (h.order && !owner.has(h.order)) owner.set(h.order, h.session);
    }
    const buckets = new Map<number, number>();
    for (const session of new Set(owner.values())) {
      const b = Math.floor(start.get(session)! / QUARTER_MS) * QUARTER_MS;
      buckets.set(b, (buckets.get(b) ?? 0) + 1);
    }
    return [...buckets].map(([b, n]) => `${new Date(b).toISOString()} ${n}`).sort();
  };
  const storedRollup = async () =>
    (
      await env.ds.query<Array<{ bucket: Date; sessions: number }>>(
        'SELECT bucket, sessions FROM purchase_rollups WHERE site_id = ?',
        [site.id],
      )
    )
      .map((r) => `${new Date(r.bucket).toISOString()} ${Number(r.sessions)}`)
      .sort();

  // A plan, not a time: as a lookup per session, right after a bulk import MariaDB read every
  // order of the site for each session of the batch (BENCHMARKS.md run AC, the backfill stall).
  it('derives whether sessions purchased from their orders read once per batch, not per session', async () => {
    const statement = deriveSessionsStatement(env.dialect, new Map([[site.id, ['ps-0', 'ps-1', 'ps-3']]]));
    if (TEST_ENGINE === 'sqlite') {
      const plan = await env.ds.query<Array<{ id: number; parent: number; detail: string }>>(
        `EXPLAIN QUERY PLAN ${statement.sql}`,
        [...statement.parameters],
      );
      const byId = new Map(plan.map((r) => [r.id, r]));
      const orders = plan.filter((r) => /\bpo\b/.test(r.detail));
      expect(orders.length).toBeGreaterThan(0);
      for (const read of orders) {
        const above: string[] = [];
        for (let up = byId.get(read.parent); up; up = byId.get(up.parent)) above.push(up.detail);
        expect(above.filter((detail) => detail.startsWith('CORRELATED'))).toEqual([]);
      }
    } else {
      const plan = await env.ds.query<Array<{ select_type: string; table: string }>>(
        `EXPLAIN ${statement.sql}`,
        [...statement.parameters],
      );
      const orders = plan.filter((r) => r.table === 'po');
      expect(orders.length).toBeGreaterThan(0);
      for (const read of orders) expect(read.select_type).not.toMatch(/DEPENDENT/);
    }
  });

  it('holds the derived purchasing sessions by quarter hour of their start', async () => {
    expect(await storedRollup()).toEqual(expectedRollup());
    for (const range of RANGES) expect(await purchasing(range)).toEqual(await raw(range));
  });

  it('reads the rollup: a row changed by hand shows in the report', async () => {
    const bump = (n: number) =>
      env.ds.query('UPDATE purchase_rollups SET sessions = sessions + ? WHERE site_id = ?', [n, site.id]);
    const before = await purchasing(RANGES[0]);
    await bump(1);
    try {
      expect((await purchasing(RANGES[0])).purchasing_sessions).toBeGreaterThan(before.purchasing_sessions);
    } finally {
      await bump(-1);
    }
  });

  it('counts sessions queued for aggregation as the raw path does, then aggregates them', async () => {
    const before = await purchasing(RANGES[0]);
    await importHits(imports[1]);
    const now = await purchasing(RANGES[0]);
    // Sessions gained orders; the repeated order id bought nothing for its session.
    expect(now.purchasing_sessions).toBeGreaterThan(before.purchasing_sessions);
    for (const range of RANGES) expect(await purchasing(range)).toEqual(await raw(range));
    await env.aggregate();
    expect(await storedRollup()).toEqual(expectedRollup());
    for (const range of RANGES) expect(await purchasing(range)).toEqual(await raw(range));
  });

  it('builds the same rollup from the sessions when migrating a database that has them', async () => {
    await env.migrateAgainFrom(/PurchaseRollups1765900000000$/);
    expect(await storedRollup()).toEqual(expectedRollup());
    for (const range of RANGES) expect(await purchasing(range)).toEqual(await raw(range));
  });
});
