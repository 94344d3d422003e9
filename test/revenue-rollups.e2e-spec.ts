import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser } from '@app/stats';
import request from 'supertest';
import { BreakdownService } from '../apps/api/src/analytics/breakdown.service';
import { pageview, purchase } from './support/hits';
import { random } from './support/random';
import { TestEnv } from './support/test-env';

const DAY_MS = 86_400_000;
const MARCH = Date.parse('2026-03-01T00:00:00Z');
const COUNTRIES = ['DE', 'US', 'NP'];

/**
 * 160 sessions of March 2026 in two imports, many across midnight and quarter hours, most with
 * orders. The second import gives a third of them an earlier first hit from another country
 * (their orders move to that country), more orders, and brings new sessions, some without a
 * country, and a purchase repeating an order id (which stays its first session's).
 */
function fixture(siteId: number): object[][] {
  const rnd = random(29);
  const imports: object[][] = [[], []];
  for (let s = 0; s < 160; s++) {
    const session = `r-${s}`;
    const start =
      s % 2 === 0
        ? MARCH + rnd.int(9, 11) * DAY_MS - rnd.int(0, 90) * 60_000
        : MARCH + Math.floor(rnd.next() * 30 * DAY_MS);
    const batch = s >= 130 ? 1 : 0;
    const o = s % 10 === 9 ? {} : { country: rnd.pick(COUNTRIES) };
    const at = (minutes: number) => new Date(start + minutes * 60_000).toISOString();
    imports[batch].push(pageview(siteId, session, at(0), '/', o));
    for (let n = 0; n < rnd.int(0, 3); n++) {
      imports[batch].push(
        purchase(siteId, session, at(rnd.int(1, 100)), `${session}-${n}`, `${rnd.int(1, 50_000) / 100}`, o),
      );
    }
    if (batch === 0 && s % 3 === 0) {
      imports[1].push(
        pageview(siteId, session, at(-rnd.int(1, 50)), '/late', { country: rnd.pick(COUNTRIES) }),
      );
      imports[1].push(purchase(siteId, session, at(130), `${session}-late`, '19.99', o));
    }
  }
  imports[1].push(purchase(siteId, 'r-3', new Date(MARCH + 12 * DAY_MS).toISOString(), 'r-0-late', '5.00'));
  return imports;
}

/**
 * The revenue rollup (issue #10): orders and revenue by session attribute and quarter hour of
 * the order ts, kept by `aggregate` as sessions change attributes and gain orders; breakdown
 * `revenue` reads it, unfiltered or filtered on its dimension, with the queued sessions read
 * raw on top.
 */
describe('Revenue rollups', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  let imports: object[][];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'America/New_York', members: [user] });
    site = { id, timezone: 'America/New_York', currency: 'USD', trackingMode: 'full' };
    imports = fixture(id);
    expect((await env.importHits(imports[0])).rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const RANGES = [
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-03-10', to: '2026-03-10' },
    { from: '2026-03-07', to: '2026-03-09' },
  ];
  const BREAKDOWN = { metric: 'revenue', dimension: 'country', limit: 2 } as const;
  const get = async (params: object) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}/analytics/breakdown-timeseries`)
      .query(params)
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return res.body as { data: { series: Array<{ total: number }> } };
  };
  const raw = async (params: { from: string; to: string; filters?: string }) =>
    JSON.parse(
      JSON.stringify(
        await app
          .get(BreakdownService)
          .report(
            { ...(await app.get(StatsQueryParser).parse(site, params)), tables: 'raw' },
            params as never,
          ),
      ),
    ) as unknown;

  async function expectRawAgrees(): Promise<void> {
    for (const range of RANGES) {
      for (const interval of ['hour', 'day'] as const) {
        if (interval === 'hour' && range.to === '2026-03-31') continue;
        for (const filters of [undefined, 'country==DE|NP']) {
          const params = { ...range, ...BREAKDOWN, interval, ...(filters ? { filters } : {}) };
          expect(await get(params)).toEqual(await raw(params));
        }
      }
    }
  }

  const storedRows = async () => {
    const money = env.decimalSql('revenue', 2);
    return {
      rollup: await env.ds.query<Array<Record<string, unknown>>>(
        `SELECT dimension, bucket, value, orders, ${money} AS revenue FROM revenue_rollups WHERE site_id = ? ORDER BY dimension, bucket, value`,
        [site.id],
      ),
      store: await env.ds.query<Array<Record<string, unknown>>>(
        `SELECT session_id, bucket, orders, ${money} AS revenue FROM session_order_buckets WHERE site_id = ? ORDER BY session_id, bucket`,
        [site.id],
      ),
    };
  };

  it('answers breakdown revenue, unfiltered and filtered on its dimension, as the raw computation does', async () => {
    await expectRawAgrees();
  });

  it('reads the rollup: a row changed by hand shows in the breakdown', async () => {
    // Local days of the site: its day rows (docs/decisions/rollups.md, "Day rows by the site's day").
    const params = { ...RANGES[0], ...BREAKDOWN, interval: 'day' };
    const total = async () => (await get(params)).data.series.reduce((sum, s) => sum + s.total, 0);
    const before = await total();
    const bump = (n: number) =>
      env.ds.query(
        `UPDATE revenue_day_rollups SET revenue = revenue + ? WHERE site_id = ? AND dimension = 'country' AND value = 'DE' AND bucket = (SELECT MIN(bucket) FROM revenue_day_rollups WHERE site_id = ? AND dimension = 'country' AND value = 'DE' AND bucket >= ?)`,
        [env.dialect.decimalIn(n, 2), site.id, site.id, new Date('2026-03-02T00:00:00Z')],
      );
    await bump(1);
    try {
      expect(await total()).toBeCloseTo(before + 1, 2);
    } finally {
      await bump(-1);
    }
  });

  it('counts queued sessions as the raw path does, and keeps the rollup equal to a build from the orders', async () => {
    expect((await env.importHits(imports[1])).rejections).toEqual([]);
    await expectRawAgrees();
    await env.aggregate();
    await expectRawAgrees();
    const kept = await storedRows();
    expect(kept.rollup.length).toBeGreaterThan(0);
    // The migration again: it builds both tables from the derived sessions' orders.
    await env.migrateAgainFrom(/RevenueRollups1766000000000$/);
    expect(await storedRows()).toEqual(kept);
  });
});
