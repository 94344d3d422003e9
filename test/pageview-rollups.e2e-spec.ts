import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser } from '@app/stats';
import request from 'supertest';
import { BreakdownService } from '../apps/api/src/analytics/breakdown.service';
import { OverviewService } from '../apps/api/src/analytics/overview.service';
import { pageview } from './support/hits';
import { random } from './support/random';
import { TestEnv } from './support/test-env';

const DAY_MS = 86_400_000;
const MARCH = Date.parse('2026-03-01T00:00:00Z');
const COUNTRIES = ['DE', 'US', 'NP'];

/**
 * 200 sessions of March 2026 in two imports, many across midnight and across quarter hours;
 * the second import gives a third of them an earlier first hit from another country (their
 * country and the quarter hours of their pageviews move) and more pageviews, and brings new
 * sessions, some without a country.
 */
function fixture(siteId: number): object[][] {
  const rnd = random(23);
  const imports: object[][] = [[], []];
  for (let s = 0; s < 200; s++) {
    const session = `p-${s}`;
    const start =
      s % 2 === 0
        ? MARCH + rnd.int(9, 11) * DAY_MS - rnd.int(0, 90) * 60_000
        : MARCH + Math.floor(rnd.next() * 30 * DAY_MS);
    const batch = s >= 170 ? 1 : 0;
    const o = s % 10 === 9 ? {} : { country: rnd.pick(COUNTRIES) };
    for (let h = 0; h < rnd.int(1, 5); h++) {
      imports[batch].push(
        pageview(siteId, session, new Date(start + rnd.int(0, 100) * 60_000).toISOString(), '/', o),
      );
    }
    if (batch === 0 && s % 3 === 0) {
      const earlier = new Date(start - rnd.int(1, 50) * 60_000).toISOString();
      imports[1].push(pageview(siteId, session, earlier, '/late', { country: rnd.pick(COUNTRIES) }));
      imports[1].push(pageview(siteId, session, new Date(start + 130 * 60_000).toISOString(), '/later', o));
    }
  }
  return imports;
}

/**
 * The pageview rollup (issue #10): pageviews by session attribute and quarter hour of their
 * own ts, kept by `aggregate` as sessions change attributes and gain pageviews; breakdown
 * `pageviews` and pageview totals under filters on one attribute read it, with the queued
 * sessions read raw on top.
 */
describe('Pageview rollups', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  let imports: object[][];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'Asia/Kathmandu', members: [user] });
    site = { id, timezone: 'Asia/Kathmandu', currency: 'USD', trackingMode: 'full' };
    imports = fixture(id);
    expect((await env.importHits(imports[0])).rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const RANGES = [
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-03-10', to: '2026-03-10' },
    { from: '2026-03-09', to: '2026-03-11' },
  ];
  const BREAKDOWN = { metric: 'pageviews', dimension: 'country', limit: 2 } as const;
  const get = async (path: string, params: object) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}${path}`)
      .query(params)
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return res.body as { data: Record<string, unknown> };
  };
  const rawQuery = async (params: { from: string; to: string; filters?: string }) => ({
    ...(await app.get(StatsQueryParser).parse(site, params)),
    tables: 'raw' as const,
  });
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as { data: Record<string, unknown> };

  async function expectRawAgrees(): Promise<void> {
    for (const range of RANGES) {
      for (const interval of ['hour', 'day'] as const) {
        // `hour` is for ranges of up to 14 days.
        if (interval === 'hour' && range.to === '2026-03-31') continue;
        const params = { ...range, ...BREAKDOWN, interval };
        expect((await get('/analytics/breakdown-timeseries', params)).data).toEqual(
          plain(await app.get(BreakdownService).report(await rawQuery(range), params)).data,
        );
      }
      for (const filters of ['country==DE', 'country!=US|(unknown)']) {
        const params = { ...range, filters, limit: 10 };
        expect((await get('/analytics/overview', params)).data.pageviews).toEqual(
          plain(await app.get(OverviewService).report(await rawQuery({ ...range, filters }), params)).data
            .pageviews,
        );
      }
    }
  }

  const rollupRows = () =>
    env.ds.query<Array<Record<string, unknown>>>(
      'SELECT dimension, bucket, value, pageviews FROM pageview_rollups WHERE site_id = ? ORDER BY dimension, bucket, value',
      [site.id],
    );

  it('answers breakdown pageviews and filtered pageviews as the raw computation does', async () => {
    await expectRawAgrees();
  });

  it('reads the rollup: a row changed by hand shows in the breakdown', async () => {
    // Local days of the site: its day rows (docs/decisions/rollups.md, "Day rows by the site's day").
    const params = { ...RANGES[0], ...BREAKDOWN, interval: 'day' };
    const total = async () =>
      ((await get('/analytics/breakdown-timeseries', params)).data.series as Array<{ total: number }>).reduce(
        (sum, s) => sum + s.total,
        0,
      );
    const before = await total();
    const bump = (n: number) =>
      env.ds.query(
        "UPDATE pageview_day_rollups SET pageviews = pageviews + ? WHERE site_id = ? AND dimension = 'country' AND value = 'DE'",
        [n, site.id],
      );
    const [{ n }] = await env.ds.query<Array<{ n: number | string }>>(
      "SELECT COUNT(*) AS n FROM pageview_day_rollups WHERE site_id = ? AND dimension = 'country' AND value = 'DE' AND bucket >= ? AND bucket < ?",
      [site.id, new Date('2026-02-28T18:15:00Z'), new Date('2026-03-31T18:15:00Z')],
    );
    await bump(1);
    try {
      expect(await total()).toBe(before + Number(n));
    } finally {
      await bump(-1);
    }
  });

  it('counts queued sessions as the raw path does, and keeps the rollup equal to a build from the hits', async () => {
    expect((await env.importHits(imports[1])).rejections).toEqual([]);
    await expectRawAgrees();
    await env.aggregate();
    await expectRawAgrees();
    const kept = await rollupRows();
    expect(kept.length).toBeGreaterThan(0);
    // The migration again: it builds the rollup from the derived sessions' pageviews.
    await env.migrateAgainFrom(/PageviewRollups1765700000000$/);
    expect(await rollupRows()).toEqual(kept);
  });
});
