import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { AnalyticsController } from '../apps/api/src/analytics/analytics.controller';
import { RealtimeQueries } from '../apps/api/src/analytics/realtime.queries';
import { buildOpenApiDocument } from '../apps/api/src/openapi';
import { event, pageview, purchase } from './support/hits';
import { TestEnv } from './support/test-env';

/**
 * Every expected number below is worked out by hand from the fixtures, with the arithmetic in
 * a comment. The main fixture is the UTC site `shop`; its report range is mostly
 * 2025-03-10..2025-03-12 = [2025-03-10T00:00Z, 2025-03-13T00:00Z).
 *
 * shop sessions (visitor `v-<session>` unless said otherwise):
 *  s0  2025-02-01 12:00 pv /                                   visitor alice, no attributes
 *  s1  03-10 10:00 pv / (t 10, scroll 10)                     visitor alice; Organic Search, google, DE, desktop — a bounce
 *  s2  03-10 11:00 pv /pricing (t 20.5, scroll 24), 11:01 purchase o-2 0.01, 11:05 event signup
 *                                                              Direct, no source, US, mobile — not a bounce
 *  s3  03-11 09:00 pv / (t 30, scroll 25), 09:02 pv /products (scroll 50), 09:05 purchase o-1 19.99,
 *      09:06 purchase o-1 99.00 (duplicate order: ignored), 09:10 pv /checkout (t 5, scroll 100)
 *                                                              visitor alice; Organic Search, google, DE, mobile
 *  s4  03-09 23:50 pv /blog (t 1000, scroll 49), 03-10 00:05 pv /pricing (t 7, scroll 75),
 *      00:07 purchase o-4 5.10, 00:10 pv /about                Referral, FR, tablet — starts before `from`
 *  s5  03-12 23:55 pv / (t 3, scroll 74), 23:58 purchase o-3 0.20, 03-13 00:05 pv /products (t 500, scroll 0)
 *                                                              Direct, no other attribute — ends after `to`
 *  s6  03-11 12:00 event ping                                  Email — no pageview, so no entry/exit page
 * Goals: event `signup` and path `/checkout*`: s2 and s3 converted.
 */
describe(AnalyticsController.name, () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let user: number;
  let shop: number;
  let newYork: number;
  let kolkata: number;
  let cookieless: number;
  let funnelSite: number;
  let live: number;

  const RANGE = 'from=2025-03-10&to=2025-03-12';

  beforeAll(async () => {
    env = await TestEnv.create();
    user = await env.user();
    shop = await env.site({ timezone: 'UTC', members: [user] });
    newYork = await env.site({ timezone: 'America/New_York', members: [user] });
    kolkata = await env.site({ timezone: 'Asia/Kolkata', members: [user] });
    cookieless = await env.site({ timezone: 'UTC', tracking: 'cookieless', members: [user] });
    funnelSite = await env.site({ timezone: 'UTC', members: [user] });
    live = await env.site({ timezone: 'Europe/Berlin', members: [user] });
    key = (await env.key(user)).key;
    await env.goal(shop, 'Signed up', 'event', 'signup');
    await env.goal(shop, 'Checkout', 'path', '/checkout*');

    const alice = { visitor_id: 'alice' };
    const s1Attributes = { channel: 'Organic Search', source: 'google', country: 'DE', device: 'desktop' };
    const imported = await env.importHits([
      pageview(shop, 's0', '2025-02-01T12:00:00Z', '/', alice),
      pageview(shop, 's1', '2025-03-10T10:00:00Z', '/', {
        ...alice,
        ...s1Attributes,
        time_on_page_seconds: 10,
        scroll_depth: 10,
      }),
      pageview(shop, 's2', '2025-03-10T11:00:00Z', '/pricing', {
        channel: 'Direct',
        country: 'US',
        device: 'mobile',
        time_on_page_seconds: 20.5,
        scroll_depth: 24,
      }),
      purchase(shop, 's2', '2025-03-10T11:01:00Z', 'o-2', '0.01'),
      event(shop, 's2', '2025-03-10T11:05:00Z', 'signup'),
      pageview(shop, 's3', '2025-03-11T09:00:00Z', '/', {
        ...alice,
        ...s1Attributes,
        device: 'mobile',
        time_on_page_seconds: 30,
        scroll_depth: 25,
      }),
      pageview(shop, 's3', '2025-03-11T09:02:00Z', '/products', { ...alice, scroll_depth: 50 }),
      purchase(shop, 's3', '2025-03-11T09:05:00Z', 'o-1', '19.99', alice),
      purchase(shop, 's3', '2025-03-11T09:06:00Z', 'o-1', '99.00', alice),
      pageview(shop, 's3', '2025-03-11T09:10:00Z', '/checkout', {
        ...alice,
        time_on_page_seconds: 5,
        scroll_depth: 100,
      }),
      pageview(shop, 's4', '2025-03-09T23:50:00Z', '/blog', {
        channel: 'Referral',
        country: 'FR',
        device: 'tablet',
        time_on_page_seconds: 1000,
        scroll_depth: 49,
      }),
      pageview(shop, 's4', '2025-03-10T00:05:00Z', '/pricing', { time_on_page_seconds: 7, scroll_depth: 75 }),
      purchase(shop, 's4', '2025-03-10T00:07:00Z', 'o-4', '5.10'),
      pageview(shop, 's4', '2025-03-10T00:10:00Z', '/about'),
      pageview(shop, 's5', '2025-03-12T23:55:00Z', '/', {
        channel: 'Direct',
        time_on_page_seconds: 3,
        scroll_depth: 74,
      }),
      purchase(shop, 's5', '2025-03-12T23:58:00Z', 'o-3', '0.20'),
      pageview(shop, 's5', '2025-03-13T00:05:00Z', '/products', {
        time_on_page_seconds: 500,
        scroll_depth: 0,
      }),
      event(shop, 's6', '2025-03-11T12:00:00Z', 'ping', { channel: 'Email' }),

      // New York falls back on 2025-11-02 at 06:00Z (02:00 EDT → 01:00 EST): that day is
      // [2025-11-02T04:00Z, 2025-11-03T05:00Z), 25 hours.
      pageview(newYork, 'n1', '2025-11-02T04:30:00Z', '/n1', { channel: 'Direct' }), // 00:30 EDT on 11-02
      pageview(newYork, 'n2', '2025-11-02T03:59:00Z', '/n2', { channel: 'Direct' }), // 23:59 EDT on 11-01
      pageview(newYork, 'n3', '2025-11-03T04:30:00Z', '/n3', { channel: 'Direct' }), // 23:30 EST on 11-02
      pageview(newYork, 'n4', '2025-11-03T05:00:00Z', '/n4', { channel: 'Direct' }), // 00:00 EST on 11-03
      pageview(newYork, 'n5', '2025-11-02T05:30:00Z', '/n5', { channel: 'Direct' }), // 01:30 EDT
      pageview(newYork, 'n6', '2025-11-02T06:30:00Z', '/n6', { channel: 'Direct' }), // 01:30 EST, the repeated hour

      // Asia/Kolkata is UTC+05:30: 2025-06-15 is [2025-06-14T18:30Z, 2025-06-15T18:30Z).
      pageview(kolkata, 'k1', '2025-06-14T18:29:00Z', '/k1', { channel: 'Direct' }), // 23:59 IST on 06-14
      pageview(kolkata, 'k2', '2025-06-14T18:30:00Z', '/k2', { channel: 'Direct' }), // 00:00 IST on 06-15
      pageview(kolkata, 'k3', '2025-06-15T18:29:59.999Z', '/k3', { channel: 'Direct' }), // 23:59:59.999 IST
      pageview(kolkata, 'k4', '2025-06-15T18:30:00Z', '/k4', { channel: 'Direct' }), // 00:00 IST on 06-16

      pageview(cookieless, 'c1', '2025-03-10T08:00:00Z', '/', { visitor_id: 'daily-1' }),
      pageview(cookieless, 'c1', '2025-03-10T08:01:00Z', '/pricing', { visitor_id: 'daily-1' }),
      pageview(cookieless, 'c2', '2025-03-11T08:00:00Z', '/', { visitor_id: 'daily-2' }),

      ...funnelHits(),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (site: number, report: string, query = '') =>
    request(app.getHttpServer())
      .get(`/api/v1/sites/${site}/analytics/${report}${query ? `?${query}` : ''}`)
      .set('Authorization', `Bearer ${key}`);

  const ok = async (site: number, report: string, query = '') => {
    const res = await get(site, report, query);
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({
      status: 200,
      body: 'ok',
    });
    return res.body;
  };

  const badRequest = async (site: number, report: string, query: string, parameter: string) => {
    const res = await get(site, report, query);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ parameter })]));
    return res.body;
  };

  describe('overview', () => {
    it('computes the headline metrics, counting sessions by start and pageviews by their own ts', async () => {
      const { data, meta } = await ok(shop, 'overview', RANGE);

      expect(meta).toEqual({
        site_id: shop,
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'UTC',
        filters: [],
      });
      expect(data).toMatchObject({
        // Sessions started in the range: s1, s2, s3, s5, s6 (s4 started on 03-09).
        sessions: 5,
        // alice (s1, s3), v-s2, v-s5, v-s6.
        visitors: 4,
        // By own ts: s1 1 + s2 1 + s3 3 + s4 2 (00:05, 00:10 on 03-10) + s5 1 (its 03-13 pageview is out) = 8.
        pageviews: 8,
        // Only s1 (one hit, a pageview): 1 / 5 = 20 %. s2 has a pageview and more; s6 only an event.
        bounce_rate: 20,
        // Pageviews of the range's sessions wherever they fall: 1 + 1 + 3 + 2 (s5) + 0 (s6) = 7; 7 / 5 = 1.4.
        pages_per_session: 1.4,
        // s1 0 + s2 300 + s3 600 + s5 600 (23:55 → 00:05) + s6 0 = 1500 s; 1500 / 5 = 300.
        avg_session_duration_seconds: 300,
      });
      expect(data).not.toHaveProperty('comparison');
    });

    it('tells a bounce from a session with one pageview and an event', async () => {
      // 03-10 alone: s1 (one pageview) bounced, s2 (pageview + purchase + event) did not: 1 / 2 = 50 %.
      const { data } = await ok(shop, 'overview', 'from=2025-03-10&to=2025-03-10');

      expect(data).toMatchObject({ sessions: 2, bounce_rate: 50, pages_per_session: 1 });
    });

    it('orders the top lists by sessions desc then value asc, with shares of all sessions', async () => {
      const { data } = await ok(shop, 'overview', RANGE);

      // Channels: Direct s2, s5 = 2; Organic Search s1, s3 = 2; Email s6 = 1 — of 5 sessions.
      expect(data.top_channels).toEqual([
        { value: 'Direct', sessions: 2, share: 40 },
        { value: 'Organic Search', sessions: 2, share: 40 },
        { value: 'Email', sessions: 1, share: 20 },
      ]);
      // Missing sources read "(direct)": s2, s5, s6.
      expect(data.top_sources).toEqual([
        { value: '(direct)', sessions: 3, share: 60 },
        { value: 'google', sessions: 2, share: 40 },
      ]);
      // "(unknown)" sorts before "DE" ('(' is 0x28, 'D' is 0x44).
      expect(data.top_countries).toEqual([
        { value: '(unknown)', sessions: 2, share: 40 },
        { value: 'DE', sessions: 2, share: 40 },
        { value: 'US', sessions: 1, share: 20 },
      ]);
      // s3's device is its first hit's (mobile), though s1 of the same visitor was desktop.
      expect(data.top_devices).toEqual([
        { value: '(unknown)', sessions: 2, share: 40 },
        { value: 'mobile', sessions: 2, share: 40 },
        { value: 'desktop', sessions: 1, share: 20 },
      ]);
    });

    it('lists entry and exit pages of sessions with pageviews, shares over all sessions', async () => {
      const { data } = await ok(shop, 'overview', RANGE);

      // Entries: s1 /, s2 /pricing, s3 /, s5 /; s6 has none. 3 / 5 = 60 %, 1 / 5 = 20 %.
      expect(data.entry_pages).toEqual([
        { value: '/', sessions: 3, share: 60 },
        { value: '/pricing', sessions: 1, share: 20 },
      ]);
      // Exits: s1 /, s2 /pricing, s3 /checkout, s5 /products (its last pageview, after `to`).
      expect(data.exit_pages).toEqual([
        { value: '/', sessions: 1, share: 20 },
        { value: '/checkout', sessions: 1, share: 20 },
        { value: '/pricing', sessions: 1, share: 20 },
        { value: '/products', sessions: 1, share: 20 },
      ]);
    });

    it('cuts every top list at limit', async () => {
      const { data } = await ok(shop, 'overview', `${RANGE}&limit=1`);

      expect(data.top_channels).toEqual([{ value: 'Direct', sessions: 2, share: 40 }]);
      expect(data.exit_pages).toEqual([{ value: '/', sessions: 1, share: 20 }]);
    });

    it('compares with the previous period, a session that started there counting there', async () => {
      const { data } = await ok(shop, 'overview', `${RANGE}&compare=previous_period`);

      // 3 days ending 03-09: 03-07..03-09. Only s4 started there: 1 session, 1 visitor,
      // 1 pageview by ts (/blog at 23:50), no bounce (3 pageviews and a purchase), 3 pages per session,
      // 23:50 → 00:10 = 1200 s.
      expect(data.comparison).toEqual({
        from: '2025-03-07',
        to: '2025-03-09',
        visitors: 1,
        sessions: 1,
        pageviews: 1,
        bounce_rate: 0,
        pages_per_session: 3,
        avg_session_duration_seconds: 1200,
        change: {
          visitors: 300, // (4 − 1) / 1
          sessions: 400, // (5 − 1) / 1
          pageviews: 700, // (8 − 1) / 1
          bounce_rate: null, // previous 0
          pages_per_session: -53.33, // (1.4 − 3) / 3 = −0.53333
          avg_session_duration_seconds: -75, // (300 − 1200) / 1200
        },
      });
    });

    it('compares year over year with an empty year: zeros and null changes', async () => {
      const { data } = await ok(shop, 'overview', `${RANGE}&compare=year_over_year`);

      expect(data.comparison).toEqual({
        from: '2024-03-10',
        to: '2024-03-12',
        visitors: 0,
        sessions: 0,
        pageviews: 0,
        bounce_rate: 0,
        pages_per_session: 0,
        avg_session_duration_seconds: 0,
        change: {
          visitors: null,
          sessions: null,
          pageviews: null,
          bounce_rate: null,
          pages_per_session: null,
          avg_session_duration_seconds: null,
        },
      });
    });

    it('reads the range in the timezone parameter instead of the site zone', async () => {
      // In New York (EDT, UTC−4 since 03-09) the range is [03-10T04:00Z, 03-13T04:00Z): the same five
      // sessions start in it, but s4's 00:05/00:10 pageviews fall out and s5's 03-13 00:05 pageview falls in:
      // 1 + 1 + 3 + 0 + 2 = 7.
      const { data, meta } = await ok(shop, 'overview', `${RANGE}&timezone=America/New_York`);

      expect(meta.timezone).toBe('America/New_York');
      expect(data).toMatchObject({ sessions: 5, pageviews: 7 });
    });

    it('counts the fall-back day of New York as 25 hours', async () => {
      // 2025-11-02 local = [04:00Z, 2025-11-03T05:00Z): n1, n3, n5, n6 start in it; n2 is 11-01, n4 11-03.
      const { data } = await ok(newYork, 'overview', 'from=2025-11-02&to=2025-11-02');

      expect(data.sessions).toBe(4);
      expect(data.entry_pages.map((p: { value: string }) => p.value)).toEqual(['/n1', '/n3', '/n5', '/n6']);
    });

    it('puts hits near local midnight on the Asia/Kolkata day they belong to', async () => {
      const { data } = await ok(kolkata, 'overview', 'from=2025-06-15&to=2025-06-15');
      // Override: the UTC day 2025-06-15 is [00:00Z, 2025-06-16T00:00Z): k3 and k4.
      const utc = await ok(kolkata, 'overview', 'from=2025-06-15&to=2025-06-15&timezone=UTC');

      // k2 starts at 00:00 IST exactly and k3 at 23:59:59.999 IST; k1 and k4 lie on the neighbouring days.
      expect(data.entry_pages.map((p: { value: string }) => p.value)).toEqual(['/k2', '/k3']);
      expect(data.pageviews).toBe(2);
      expect(utc.data.entry_pages.map((p: { value: string }) => p.value)).toEqual(['/k3', '/k4']);
      expect(utc.meta.timezone).toBe('UTC');
    });
  });

  describe('breakdown-timeseries', () => {
    const breakdown = (site: number, query: string) => ok(site, 'breakdown-timeseries', query);

    it('gives the top values by sessions, ties by value, then Other; points per day', async () => {
      const { data, meta } = await breakdown(shop, `${RANGE}&metric=sessions&dimension=channel&limit=1`);

      expect(meta).toEqual({
        site_id: shop,
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'UTC',
        filters: [],
      });
      // Direct and Organic Search tie at 2 sessions: Direct wins on value. Direct: s2 (03-10), s5 (03-12).
      // Other: s1 (03-10), s3 (03-11, Organic Search) and s6 (03-11, Email).
      expect(data).toEqual({
        metric: 'sessions',
        dimension: 'channel',
        interval: 'day',
        buckets: ['2025-03-10', '2025-03-11', '2025-03-12'],
        series: [
          { value: 'Direct', total: 2, points: [1, 0, 1] },
          { value: 'Other', total: 3, points: [1, 2, 0] },
        ],
      });
    });

    it('computes a rate of Other over the union of its values, not as a mean of their rates', async () => {
      const { data } = await breakdown(shop, `${RANGE}&metric=bounce_rate&dimension=channel&limit=1`);

      // Direct (s2, s5) never bounced. Other = Organic Search (s1 bounced, s3 not) + Email (s6 not):
      // 1 / 3 = 33.33 % (the mean of 50 % and 0 % would be 25). Per day: 03-10 s1 1/1 = 100;
      // 03-11 s3, s6 0/2 = 0; 03-12 no Other session → 0.
      expect(data.series).toEqual([
        { value: 'Direct', total: 0, points: [0, 0, 0] },
        { value: 'Other', total: 33.33, points: [100, 0, 0] },
      ]);
    });

    it('computes conv_rate from the site goals, per session by its start', async () => {
      const { data } = await breakdown(shop, `${RANGE}&metric=conv_rate&dimension=channel&limit=2`);

      // Converted: s2 (signup, Direct, 03-10) and s3 (/checkout, Organic Search, 03-11).
      // Direct: s2 1/1 on 03-10, s5 0/1 on 03-12 → total 1/2 = 50. Organic Search: s1 0/1, s3 1/1 → 50.
      // Other: Email s6 0/1.
      expect(data.series).toEqual([
        { value: 'Direct', total: 50, points: [100, 0, 0] },
        { value: 'Organic Search', total: 50, points: [0, 100, 0] },
        { value: 'Other', total: 0, points: [0, 0, 0] },
      ]);
    });

    it('counts pageviews by their own ts under their session attribute, zeros for an empty Other', async () => {
      const { data } = await breakdown(shop, `${RANGE}&metric=pageviews&dimension=device`);

      // mobile s2 1 (03-10) + s3 3 (03-11) = 4; tablet s4 2 (03-10, its session started 03-09);
      // (unknown) s5 1 (03-12) and desktop s1 1 (03-10) tie at 1: "(unknown)" sorts first. Nothing remains.
      expect(data.series).toEqual([
        { value: 'mobile', total: 4, points: [1, 3, 0] },
        { value: 'tablet', total: 2, points: [2, 0, 0] },
        { value: '(unknown)', total: 1, points: [0, 0, 1] },
        { value: 'desktop', total: 1, points: [1, 0, 0] },
        { value: 'Other', total: 0, points: [0, 0, 0] },
      ]);
    });

    it('leaves a session that started before from out of session metrics', async () => {
      const { data } = await breakdown(shop, `${RANGE}&metric=sessions&dimension=channel`);

      // No Referral series: s4 started on 03-09.
      expect(data.series.map((s: { value: string }) => s.value)).toEqual([
        'Direct',
        'Organic Search',
        'Email',
        'Other',
      ]);
    });

    it('sums deduplicated order revenue by order ts, exactly to the cent', async () => {
      const { data } = await breakdown(shop, `${RANGE}&metric=revenue&dimension=country&limit=2`);

      // Orders: o-1 19.99 DE (03-11; its duplicate 99.00 ignored), o-4 5.10 FR (03-10, session from 03-09),
      // o-3 0.20 (unknown) (03-12), o-2 0.01 US (03-10). Other = 0.01 + 0.20 = 0.21.
      expect(data.series).toEqual([
        { value: 'DE', total: 19.99, points: [0, 19.99, 0] },
        { value: 'FR', total: 5.1, points: [5.1, 0, 0] },
        { value: 'Other', total: 0.21, points: [0.01, 0, 0.2] },
      ]);
    });

    it('starts weeks on Monday and clips the first and last week to the range', async () => {
      // 2025-03-05 is a Wednesday: weeks 03-05..03-09 (clipped), 03-10..03-16, 03-17..03-19 (clipped).
      const { data } = await breakdown(
        shop,
        'from=2025-03-05&to=2025-03-19&metric=sessions&dimension=channel&interval=week',
      );

      // s4 (Referral) starts 03-09, the rest in the second week. Email and Referral tie at 1.
      expect(data.buckets).toEqual(['2025-03-05', '2025-03-10', '2025-03-17']);
      expect(data.series).toEqual([
        { value: 'Direct', total: 2, points: [0, 2, 0] },
        { value: 'Organic Search', total: 2, points: [0, 2, 0] },
        { value: 'Email', total: 1, points: [0, 1, 0] },
        { value: 'Referral', total: 1, points: [1, 0, 0] },
        { value: 'Other', total: 0, points: [0, 0, 0] },
      ]);
    });

    it('labels months by their first day, the first one clipped to from', async () => {
      const { data } = await breakdown(
        shop,
        'from=2025-01-20&to=2025-03-20&metric=sessions&dimension=channel&interval=month&limit=2',
      );

      // s0 ((unknown), 02-01) in February; s4 (Referral) and the five others in March.
      // Other = (unknown) 1 in February + Email 1 + Referral 1 in March.
      expect(data.buckets).toEqual(['2025-01-20', '2025-02-01', '2025-03-01']);
      expect(data.series).toEqual([
        { value: 'Direct', total: 2, points: [0, 0, 2] },
        { value: 'Organic Search', total: 2, points: [0, 0, 2] },
        { value: 'Other', total: 3, points: [0, 1, 2] },
      ]);
    });

    it('gives 24 hour buckets labelled with the offset', async () => {
      const { data } = await breakdown(
        shop,
        'from=2025-03-10&to=2025-03-10&metric=sessions&dimension=channel&interval=hour',
      );

      // s1 starts at 10:00 (Organic Search), s2 at 11:00 (Direct).
      const hour = (i: number) => Array.from({ length: 24 }, (_, h) => (h === i ? 1 : 0));
      expect(data.buckets).toHaveLength(24);
      expect(data.buckets[0]).toBe('2025-03-10T00:00:00+00:00');
      expect(data.buckets[23]).toBe('2025-03-10T23:00:00+00:00');
      expect(data.series).toEqual([
        { value: 'Direct', total: 1, points: hour(11) },
        { value: 'Organic Search', total: 1, points: hour(10) },
        { value: 'Other', total: 0, points: hour(-1) },
      ]);
    });

    it('accepts hour buckets over exactly 14 days', async () => {
      const { data } = await breakdown(
        shop,
        'from=2025-03-01&to=2025-03-14&metric=sessions&dimension=channel&interval=hour',
      );

      expect(data.buckets).toHaveLength(14 * 24);
    });

    it('follows the New York fall-back: a 25-hour day and the repeated 01:00 hour', async () => {
      const days = await breakdown(
        newYork,
        'from=2025-11-01&to=2025-11-03&metric=sessions&dimension=channel',
      );
      const hours = await breakdown(
        newYork,
        'from=2025-11-02&to=2025-11-02&metric=sessions&dimension=channel&interval=hour',
      );

      // 11-01: n2; 11-02: n1, n3 (23:30 EST — it would be 11-03 at −04:00), n5, n6; 11-03: n4.
      expect(days.data.series[0]).toEqual({ value: 'Direct', total: 6, points: [1, 4, 1] });
      // 25 buckets: 00 EDT, 01 EDT, 01 EST, 02 EST … 23 EST. n1 → 0, n5 → 1, n6 → 2, n3 → 24.
      expect(hours.data.buckets).toHaveLength(25);
      expect(hours.data.buckets.slice(0, 3)).toEqual([
        '2025-11-02T00:00:00-04:00',
        '2025-11-02T01:00:00-04:00',
        '2025-11-02T01:00:00-05:00',
      ]);
      expect(hours.data.buckets[24]).toBe('2025-11-02T23:00:00-05:00');
      const expected = Array<number>(25).fill(0);
      for (const i of [0, 1, 2, 24]) expected[i] = 1;
      expect(hours.data.series[0]).toEqual({ value: 'Direct', total: 4, points: expected });
    });

    it('puts Asia/Kolkata hits into local days and :30-UTC hours', async () => {
      const days = await breakdown(
        kolkata,
        'from=2025-06-14&to=2025-06-16&metric=pageviews&dimension=channel',
      );
      const hours = await breakdown(
        kolkata,
        'from=2025-06-15&to=2025-06-15&metric=pageviews&dimension=channel&interval=hour',
      );

      // k1 23:59 IST on 06-14; k2 00:00 and k3 23:59:59.999 on 06-15; k4 00:00 on 06-16.
      expect(days.data.series[0]).toEqual({ value: 'Direct', total: 4, points: [1, 2, 1] });
      expect(hours.data.buckets[0]).toBe('2025-06-15T00:00:00+05:30');
      const expected = Array<number>(24).fill(0);
      expected[0] = 1;
      expected[23] = 1;
      expect(hours.data.series[0]).toEqual({ value: 'Direct', total: 2, points: expected });
    });
  });

  describe('engagement', () => {
    it('gives pages per session, time on page, scroll depth and returning visitors', async () => {
      const { data, meta } = await ok(shop, 'engagement', RANGE);

      expect(meta).toEqual({
        site_id: shop,
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'UTC',
        tracking_mode: 'full',
        filters: [],
      });
      expect(data).toEqual({
        // As in the overview: 7 pageviews of the 5 sessions started in the range.
        pages_per_session: 1.4,
        // Pageviews of the range with a time: 10 + 20.5 + 30 + 5 + 7 (s4) + 3 (s5) = 75.5; 75.5 / 6 = 12.583.
        avg_time_on_page_seconds: 12.58,
        // With a depth in the range: 10, 24 | 25 | 50, 74 | 100, 75 — 7 pageviews (s4's 49 and s5's 0 are out).
        scroll_depth: [
          { bucket: '0-24', pageviews: 2, share: 28.57 }, // 2 / 7
          { bucket: '25-49', pageviews: 1, share: 14.29 }, // 1 / 7
          { bucket: '50-74', pageviews: 2, share: 28.57 },
          { bucket: '75-100', pageviews: 2, share: 28.57 },
        ],
        // alice's first session s0 is from 02-01: returning. v-s2, v-s5, v-s6 are new. 1 / 4 = 25 %.
        returning_visitors: { new_visitors: 3, returning_visitors: 1, returning_share: 25 },
      });
    });

    it('counts a visitor whose first session is in the range as new', async () => {
      // From 02-01 on alice's first session (s0, 02-01) is inside the range.
      const { data } = await ok(shop, 'engagement', 'from=2025-02-01&to=2025-03-12');

      // alice, v-s2, v-s4, v-s5, v-s6: all new.
      expect(data.returning_visitors).toEqual({ new_visitors: 5, returning_visitors: 0, returning_share: 0 });
    });

    it('has no returning visitors for a cookieless site and says why in meta', async () => {
      const { data, meta } = await ok(cookieless, 'engagement', RANGE);

      // c1 has 2 pageviews, c2 1: 3 / 2 = 1.5.
      expect(data.pages_per_session).toBe(1.5);
      expect(data.returning_visitors).toBeNull();
      expect(meta.tracking_mode).toBe('cookieless');
    });

    it('gives zeros for an empty range', async () => {
      const { data } = await ok(shop, 'engagement', 'from=2024-01-01&to=2024-01-31');

      expect(data).toEqual({
        pages_per_session: 0,
        avg_time_on_page_seconds: 0,
        scroll_depth: [
          { bucket: '0-24', pageviews: 0, share: 0 },
          { bucket: '25-49', pageviews: 0, share: 0 },
          { bucket: '50-74', pageviews: 0, share: 0 },
          { bucket: '75-100', pageviews: 0, share: 0 },
        ],
        returning_visitors: { new_visitors: 0, returning_visitors: 0, returning_share: 0 },
      });
    });
  });

  describe('realtime', () => {
    it('reads hits of the last 5 and 30 minutes live, before any aggregation', async () => {
      const now = Date.now();
      const ago = (minutes: number) => new Date(now - minutes * 60_000).toISOString();
      const imported = await env.importHits([
        pageview(live, 'r1', ago(2), '/home', { visitor_id: 'rv1', country: 'DE', device: 'desktop' }),
        pageview(live, 'r1', ago(1), '/pricing', { visitor_id: 'rv1' }),
        pageview(live, 'r2', ago(3), '/pricing', { visitor_id: 'rv2', device: 'mobile' }),
        event(live, 'r2', ago(2.5), 'signup', { visitor_id: 'rv2', path: '/pricing' }),
        pageview(live, 'r3', ago(40), '/old', { visitor_id: 'rv3' }),
        event(live, 'r3', ago(40), 'old_event', { visitor_id: 'rv3' }),
        pageview(live, 'r4', ago(10), '/blog', { visitor_id: 'rv4', country: 'FR', device: 'tablet' }),
        // r5's first hit is an event 20 minutes ago: its session's country and device come from there.
        event(live, 'r5', ago(20), 'ping', { visitor_id: 'rv5', country: 'IT', device: 'mobile' }),
        pageview(live, 'r5', ago(4), '/it', { visitor_id: 'rv5' }),
      ]);
      expect(imported.rejections).toEqual([]);

      const { data, meta } = await ok(live, 'realtime');

      expect(meta.site_id).toBe(live);
      expect(meta.timezone).toBe('Europe/Berlin');
      expect(Math.abs(Date.parse(meta.generated_at) - Date.now())).toBeLessThan(60_000);
      // Last 5 minutes: rv1 (−1, −2), rv2 (−3, −2.5), rv5 (−4). rv4 (−10) and rv3 (−40) are older.
      expect(data.active_visitors).toBe(3);
      // Last 30 minutes: r1 2 + r2 1 + r4 1 + r5 1 = 5; /old (−40) is out.
      expect(data.pageviews_last_30_minutes).toBe(5);
      expect(data.recent_pageviews).toEqual([
        { ts: ago(1), path: '/pricing', country: 'DE', device: 'desktop' },
        { ts: ago(2), path: '/home', country: 'DE', device: 'desktop' },
        { ts: ago(3), path: '/pricing', country: '(unknown)', device: 'mobile' },
        { ts: ago(4), path: '/it', country: 'IT', device: 'mobile' },
        { ts: ago(10), path: '/blog', country: 'FR', device: 'tablet' },
      ]);
      expect(data.events).toEqual([
        { ts: ago(2.5), name: 'signup', path: '/pricing' },
        { ts: ago(20), name: 'ping', path: null },
      ]);
      // Last 5 minutes' pageviews: /pricing by rv1 and rv2; /home by rv1; /it by rv5.
      expect(data.top_pages).toEqual([
        { value: '/pricing', active_visitors: 2 },
        { value: '/home', active_visitors: 1 },
        { value: '/it', active_visitors: 1 },
      ]);
    });

    it('counts the pageviews of a window cut anywhere in its quarter hours: rollup rows and raw edges', async () => {
      // Pageviews on and around the quarter hours of 12:00-13:00 UTC, an event (never counted) and
      // another site's pageview at the same times. Each window's expected count is the fixture's
      // own: the pageviews stamped from since to until, both included.
      const site = await env.site({ timezone: 'UTC', members: [user] });
      const other = await env.site({ timezone: 'UTC', members: [user] });
      const at = (clock: string) => `2025-06-01T${clock}Z`;
      // Hour:minute:second.ms of each pageview: the first quarter hour's are also the windows' starts.
      const firstQuarter = '12:00:00.000 12:03:00.000 12:07:30.000 12:07:30.001 12:10:00.000 12:14:59.999';
      const rest =
        '12:15:00.000 12:22:00.000 12:29:59.999 12:30:00.000 12:37:00.000 12:44:59.999 12:45:00.000';
      const stamps = `${firstQuarter} ${rest} 12:45:00.000 12:50:00.000 12:59:59.999 13:00:00.000`.split(' ');
      const imported = await env.importHits([
        ...stamps.map((clock, n) => pageview(site, `w${n}`, at(clock), '/p')),
        event(site, 'w0', at('12:30:00.000'), 'ping'),
        ...stamps.map((clock, n) => pageview(other, `o${n}`, at(clock), '/p')),
      ]);
      expect(imported.rejections).toEqual([]);
      const queries = app.get(RealtimeQueries);

      const starts = firstQuarter.split(' ');
      const ends = '12:29:59.999 12:30:00.000 12:37:00.000 12:44:59.999 12:45:00.000 12:50:00.000'.split(' ');
      for (const since of starts.map(at)) {
        for (const until of ends.map(at)) {
          const expected = stamps.map(at).filter((ts) => ts >= since && ts <= until).length;
          const window = { siteId: site, since: new Date(since), until: new Date(until) };
          expect({ since, until, n: await queries.pageviewCount(window) }).toEqual({
            since,
            until,
            n: expected,
          });
        }
      }
      // A window inside one quarter hour, and one that ends where the next starts.
      const inside = {
        siteId: site,
        since: new Date(at('12:03:00.000')),
        until: new Date(at('12:10:00.000')),
      };
      expect(await queries.pageviewCount(inside)).toBe(4);
      const toNext = {
        siteId: site,
        since: new Date(at('12:45:00.000')),
        until: new Date(at('13:00:00.000')),
      };
      expect(await queries.pageviewCount(toNext)).toBe(5);
    });

    /**
     * Active visitors and pages read `live_hits`: `import` keeps the hits stamped within the last
     * hour of its clock (and later), each import first deletes the older ones, and the migration
     * that creates the table fills it from the hits of the last hour.
     */
    it("keeps the last hour's hits for the 5-minute window: import adds and prunes them, the migration fills them", async () => {
      const site = await env.site({ timezone: 'UTC', members: [user] });
      const now = Date.now();
      const ago = (minutes: number) => new Date(now - minutes * 60_000).toISOString();
      // Two paths alike in their first 300 characters: grouped by the whole path's hash, apart.
      const long = `/${'x'.repeat(300)}`;
      const hits = [
        pageview(site, 'k1', ago(120), '/two-hours-ago', { visitor_id: 'kv1' }),
        pageview(site, 'k2', ago(61), '/an-hour-ago', { visitor_id: 'kv2' }),
        pageview(site, 'k3', ago(59), '/recent', { visitor_id: 'kv3' }),
        pageview(site, 'k4', ago(2), `${long}/a`, { visitor_id: 'kv4' }),
        pageview(site, 'k4', ago(1), `${long}/b`, { visitor_id: 'kv4' }),
        pageview(site, 'k5', ago(1), `${long}/b`, { visitor_id: 'kv5' }),
        event(site, 'k6', ago(3), 'signup', { visitor_id: 'kv6' }),
        // Stamped a minute ahead of the clock: kept, and not current yet.
        pageview(site, 'k7', ago(-1), '/ahead', { visitor_id: 'kv7' }),
      ];
      expect((await env.importHits(hits)).rejections).toEqual([]);
      const idsOf = (list: Array<{ id: string }>) => list.map((h) => h.id).sort();
      const recent = idsOf(hits.slice(2));
      const kept = async () => {
        const rows = await env.ds.query<Array<{ hit_id: string }>>(
          'SELECT hit_id FROM live_hits WHERE site_id = ?',
          [site],
        );
        return rows.map((r) => r.hit_id).sort();
      };
      expect(await kept()).toEqual(recent);

      const { data } = await ok(site, 'realtime');
      // Last 5 minutes: kv4 (−2, −1), kv5 (−1), kv6's event (−3); kv7's pageview is not current yet.
      expect(data.active_visitors).toBe(3);
      expect(data.top_pages).toEqual([
        { value: `${long}/b`, active_visitors: 2 },
        { value: `${long}/a`, active_visitors: 1 },
      ]);

      // A row older than an hour (as an import of two hours ago left it) goes at the next import.
      await env.ds.query(
        "INSERT INTO live_hits (site_id, ts, hit_id, type, visitor_id, path_hash, path) VALUES (?, ?, 'stale', 'pageview', 'kv0', NULL, '/')",
        [site, new Date(now - 120 * 60_000)],
      );
      expect(await kept()).toEqual([...recent, 'stale'].sort());
      const next = pageview(site, 'k8', ago(0.5), '/next', { visitor_id: 'kv8' });
      expect((await env.importHits([next])).rejections).toEqual([]);
      const now8 = idsOf([...hits.slice(2), next]);
      expect(await kept()).toEqual(now8);

      // The migration again: it fills the table from the hits of the last hour.
      await env.migrateAgainFrom(/LiveHits1767400000000$/);
      expect(await kept()).toEqual(now8);
      // Ties by path, in binary order: '/next' before '/xxx…/a'.
      expect((await ok(site, 'realtime')).data.top_pages).toEqual([
        { value: `${long}/b`, active_visitors: 2 },
        { value: '/next', active_visitors: 1 },
        { value: `${long}/a`, active_visitors: 1 },
      ]);
    });

    it('is empty for a site without recent hits', async () => {
      const { data } = await ok(shop, 'realtime');

      expect(data).toEqual({
        active_visitors: 0,
        pageviews_last_30_minutes: 0,
        recent_pageviews: [],
        events: [],
        top_pages: [],
      });
    });

    it('refuses any parameter, even a date range', async () => {
      await badRequest(live, 'realtime', 'foo=1', 'foo');
      await badRequest(live, 'realtime', 'from=2025-03-10', 'from');
    });
  });

  describe('funnel', () => {
    const steps = (...list: object[]) => `steps=${encodeURIComponent(JSON.stringify(list))}`;
    const PRICING = { type: 'pageview', path: '/pricing' };
    const SIGNUP = { type: 'event', name: 'signup' };

    it('counts a last step 1 minute inside the window and not one 1 minute outside, even after to', async () => {
      const { data, meta } = await ok(
        funnelSite,
        'funnel',
        `from=2025-05-01&to=2025-05-01&${steps(PRICING, SIGNUP)}`,
      );

      expect(meta).toEqual({
        site_id: funnelSite,
        from: '2025-05-01',
        to: '2025-05-01',
        timezone: 'UTC',
        filters: [],
      });
      // Step 1 (a /pricing hit on 05-01): f-a, f-b, f-c, f-d, f-e, f-f, f-g = 7 (f-h's was on 04-30).
      // Step 2 within 24 h: f-a (23 h 59 min, next day), f-c (exactly 24 h), f-d (its second attempt),
      // f-g (same ts, imported after) = 4. Not: f-b (24 h 1 min), f-e (signup before), f-f (same ts, imported before).
      expect(data).toEqual({
        window_hours: 24,
        steps: [
          {
            step: 1,
            type: 'pageview',
            path: '/pricing',
            visitors: 7,
            conversion_rate: 100,
            drop_off: 0,
            drop_off_rate: 0,
          },
          // 4 / 7 = 57.14 %; drop-off 7 − 4 = 3, 3 / 7 = 42.86 %.
          {
            step: 2,
            type: 'event',
            name: 'signup',
            visitors: 4,
            conversion_rate: 57.14,
            drop_off: 3,
            drop_off_rate: 42.86,
          },
        ],
        completed_visitors: 4,
        conversion_rate: 57.14,
      });
    });

    it('shrinks with window_hours: 1 hour leaves only the same-moment signup', async () => {
      const { data } = await ok(
        funnelSite,
        'funnel',
        `from=2025-05-01&to=2025-05-01&window_hours=1&${steps(PRICING, SIGNUP)}`,
      );

      // f-d's second attempt (20:00 → 19:00 next day) is 23 h: out. Only f-g remains.
      expect(data.window_hours).toBe(1);
      expect(data.steps.map((s: { visitors: number }) => s.visitors)).toEqual([7, 1]);
    });

    it('starts an attempt at every step-1 hit: a later repeat can still complete', async () => {
      // f-d: /pricing at 01:00 and 20:00, signup at 19:00 the next day (42 h / 23 h after).
      const { data } = await ok(
        funnelSite,
        'funnel',
        `from=2025-05-01&to=2025-05-01&window_hours=30&${steps(PRICING, SIGNUP)}`,
      );

      // 30 h: f-b (24 h 1 min) is in now; f-d still only through its second attempt. 5 of 7.
      expect(data.steps[1].visitors).toBe(5);
    });

    it('matches a path prefix with *, across a visitor’s sessions', async () => {
      const { data } = await ok(
        funnelSite,
        'funnel',
        `from=2025-05-03&to=2025-05-03&${steps({ type: 'pageview', path: '/blog/*' }, PRICING, SIGNUP)}`,
      );

      // /blog/* matches f-i (/blog/a) and f-k (/blog/x/y), not f-j (/blog) nor f-l (/blogger).
      // Both reach /pricing; only f-i signs up (in another session of the same visitor).
      expect(data.steps).toEqual([
        {
          step: 1,
          type: 'pageview',
          path: '/blog/*',
          visitors: 2,
          conversion_rate: 100,
          drop_off: 0,
          drop_off_rate: 0,
        },
        {
          step: 2,
          type: 'pageview',
          path: '/pricing',
          visitors: 2,
          conversion_rate: 100,
          drop_off: 0,
          drop_off_rate: 0,
        },
        // 1 / 2 = 50 %; drop-off 1 of 2.
        {
          step: 3,
          type: 'event',
          name: 'signup',
          visitors: 1,
          conversion_rate: 50,
          drop_off: 1,
          drop_off_rate: 50,
        },
      ]);
      expect(data).toMatchObject({ completed_visitors: 1, conversion_rate: 50 });
    });

    it('needs a later hit for a repeated step', async () => {
      // 05-05: f-m viewed /pricing once, f-n twice.
      const { data } = await ok(
        funnelSite,
        'funnel',
        `from=2025-05-05&to=2025-05-05&${steps(PRICING, PRICING)}`,
      );

      expect(data.steps.map((s: { visitors: number }) => s.visitors)).toEqual([2, 1]);
    });

    it('has zeros when nobody entered', async () => {
      const { data } = await ok(
        funnelSite,
        'funnel',
        `from=2024-01-01&to=2024-01-01&${steps(PRICING, SIGNUP)}`,
      );

      expect(data).toMatchObject({ completed_visitors: 0, conversion_rate: 0 });
      expect(data.steps[1]).toMatchObject({ visitors: 0, conversion_rate: 0, drop_off: 0, drop_off_rate: 0 });
    });
  });

  describe('parameters', () => {
    const BREAKDOWN = `${RANGE}&metric=sessions&dimension=channel`;
    const STEPS = `steps=${encodeURIComponent('[{"type":"pageview","path":"/pricing"}]')}`;

    it('accepts a timezone in any case and echoes its canonical name', async () => {
      const { meta } = await ok(shop, 'overview', `${RANGE}&timezone=asia/kathmandu`);
      expect(meta.timezone).toBe('Asia/Kathmandu');
    });

    it('refuses a bad or missing metric and dimension', async () => {
      const wrong = await badRequest(
        shop,
        'breakdown-timeseries',
        `${RANGE}&metric=visits&dimension=channel`,
        'metric',
      );
      expect(wrong.detail).toBe(
        'metric must be one of: sessions, pageviews, bounce_rate, conv_rate, revenue',
      );
      const missing = await badRequest(shop, 'breakdown-timeseries', `${RANGE}&dimension=channel`, 'metric');
      expect(missing.detail).toBe(
        'metric is required: one of sessions, pageviews, bounce_rate, conv_rate, revenue',
      );
      await badRequest(shop, 'breakdown-timeseries', `${RANGE}&metric=sessions&dimension=city`, 'dimension');
      const noDimension = await badRequest(
        shop,
        'breakdown-timeseries',
        `${RANGE}&metric=sessions`,
        'dimension',
      );
      expect(noDimension.detail).toBe('dimension is required: one of channel, country, device, browser');
    });

    it('refuses interval=hour over more than 14 days, and an unknown interval', async () => {
      const body = await badRequest(
        shop,
        'breakdown-timeseries',
        `from=2025-03-01&to=2025-03-15&metric=sessions&dimension=channel&interval=hour`,
        'interval',
      );
      expect(body.detail).toContain('14 days');
      await badRequest(shop, 'breakdown-timeseries', `${BREAKDOWN}&interval=minute`, 'interval');
    });

    it('refuses limits out of range', async () => {
      await badRequest(shop, 'breakdown-timeseries', `${BREAKDOWN}&limit=21`, 'limit');
      await badRequest(shop, 'breakdown-timeseries', `${BREAKDOWN}&limit=0`, 'limit');
      await badRequest(shop, 'overview', `${RANGE}&limit=101`, 'limit');
      await badRequest(shop, 'overview', `${RANGE}&limit=1.5`, 'limit');
    });

    it('refuses an unknown compare mode', async () => {
      await badRequest(shop, 'overview', `${RANGE}&compare=last_week`, 'compare');
    });

    it('refuses window_hours 0 and 169', async () => {
      await badRequest(shop, 'funnel', `${STEPS}&window_hours=0`, 'window_hours');
      await badRequest(shop, 'funnel', `${STEPS}&window_hours=169`, 'window_hours');
    });

    it('refuses missing, malformed, oversized and 11-step steps', async () => {
      const missing = await badRequest(shop, 'funnel', RANGE, 'steps');
      expect(missing.detail).toMatch(
        /^steps is required: a JSON array of 1 to 10 steps such as \[\{"type":"pageview"/,
      );
      await badRequest(shop, 'funnel', `steps=${encodeURIComponent('[{"type":')}`, 'steps');
      const step = { type: 'pageview', path: '/pricing' };
      const eleven = await badRequest(
        shop,
        'funnel',
        `steps=${encodeURIComponent(JSON.stringify(Array(11).fill(step)))}`,
        'steps',
      );
      expect(eleven.detail).toContain('at most 10');
      // One step whose path makes the JSON 4097 bytes.
      const padding = 4097 - JSON.stringify([{ type: 'pageview', path: '/' }]).length;
      const big = JSON.stringify([{ type: 'pageview', path: `/${'a'.repeat(padding)}` }]);
      expect(big.length).toBe(4097);
      const oversized = await badRequest(shop, 'funnel', `steps=${encodeURIComponent(big)}`, 'steps');
      expect(oversized.detail).toContain('4096 bytes');
    });

    it('refuses an unknown step type and a step without its path or name', async () => {
      const send = (list: object[]) => `steps=${encodeURIComponent(JSON.stringify(list))}`;
      const unknown = await badRequest(shop, 'funnel', send([{ type: 'click', name: 'x' }]), 'steps');
      expect(unknown.detail).toContain('unknown type');
      const noPath = await badRequest(shop, 'funnel', send([{ type: 'pageview' }]), 'steps');
      expect(noPath.detail).toContain('"path"');
      await badRequest(shop, 'funnel', send([{ type: 'event', name: 'a' }, { type: 'event' }]), 'steps');
    });

    it('refuses from after to, ranges over 731 days, unknown parameters and zones on every report', async () => {
      const reports: Array<[string, string]> = [
        ['overview', ''],
        ['breakdown-timeseries', 'metric=sessions&dimension=channel&'],
        ['engagement', ''],
        ['funnel', `${STEPS}&`],
      ];
      for (const [report, required] of reports) {
        await badRequest(shop, report, `${required}from=2025-03-12&to=2025-03-10`, 'from');
        // 2024-01-01..2026-01-01 = 366 + 365 + 1 = 732 days.
        const tooLong = await badRequest(shop, report, `${required}from=2024-01-01&to=2026-01-01`, 'from');
        expect(tooLong.detail).toContain('731');
        await badRequest(shop, report, `${required}${RANGE}&color=blue`, 'color');
        await badRequest(shop, report, `${required}${RANGE}&timezone=Mars/Olympus`, 'timezone');
      }
    });
  });

  it('documents every parameter and response field of the analytics routes with an example', () => {
    type Schema = {
      $ref?: string;
      example?: unknown;
      items?: Schema;
      properties?: Record<string, Schema>;
      allOf?: Schema[];
      oneOf?: Schema[];
    };
    const document = buildOpenApiDocument(app) as unknown as {
      paths: Record<
        string,
        {
          get: {
            parameters: Array<{ name: string; example?: unknown; schema?: Schema }>;
            responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
          };
        }
      >;
      components: { schemas: Record<string, Schema> };
    };
    const undocumented: string[] = [];
    const visit = (schema: Schema, where: string, seen: Set<string>): void => {
      if (schema.$ref) {
        const name = schema.$ref.split('/').pop()!;
        if (!seen.has(name)) visit(document.components.schemas[name], name, new Set([...seen, name]));
        return;
      }
      for (const part of [...(schema.allOf ?? []), ...(schema.oneOf ?? [])]) visit(part, where, seen);
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        const nested = property.$ref ?? property.items?.$ref ?? property.allOf ?? property.oneOf;
        if (nested) visit(property.items ?? property, `${where}.${field}`, seen);
        else if (property.example === undefined) undocumented.push(`${where}.${field}`);
      }
    };
    const paths = Object.keys(document.paths).filter((p) => p.includes('/analytics/'));
    expect(paths.sort()).toEqual(
      ['breakdown-timeseries', 'engagement', 'funnel', 'overview', 'realtime'].map(
        (r) => `/api/v1/sites/{id}/analytics/${r}`,
      ),
    );
    for (const path of paths) {
      const operation = document.paths[path].get;
      for (const p of operation.parameters) {
        if ((p.example ?? p.schema?.example) === undefined) undocumented.push(`${path} ?${p.name}`);
      }
      visit(operation.responses['200'].content!['application/json'].schema, path, new Set());
    }

    expect(undocumented).toEqual([]);
  });

  function funnelHits() {
    const s = funnelSite;
    const as = (visitor: string) => ({ visitor_id: visitor });
    return [
      // 05-01, steps /pricing → signup, window 24 h.
      pageview(s, 'fa1', '2025-05-01T10:00:00Z', '/pricing', as('f-a')),
      event(s, 'fa2', '2025-05-02T09:59:00Z', 'signup', as('f-a')), // 23 h 59 min later, after `to`
      pageview(s, 'fb1', '2025-05-01T10:00:00Z', '/pricing', as('f-b')),
      event(s, 'fb2', '2025-05-02T10:01:00Z', 'signup', as('f-b')), // 24 h 1 min later
      pageview(s, 'fc1', '2025-05-01T12:00:00Z', '/pricing', as('f-c')),
      event(s, 'fc1', '2025-05-02T12:00:00.000Z', 'signup', as('f-c')), // exactly 24 h later
      pageview(s, 'fd1', '2025-05-01T01:00:00Z', '/pricing', as('f-d')),
      pageview(s, 'fd2', '2025-05-01T20:00:00Z', '/pricing', as('f-d')),
      event(s, 'fd3', '2025-05-02T19:00:00Z', 'signup', as('f-d')), // 42 h after the first, 23 h after the second
      event(s, 'fe1', '2025-05-01T08:00:00Z', 'signup', as('f-e')), // before its /pricing
      pageview(s, 'fe1', '2025-05-01T09:00:00Z', '/pricing', as('f-e')),
      event(s, 'ff1', '2025-05-01T15:00:00Z', 'signup', as('f-f')), // same ts, imported first
      pageview(s, 'ff1', '2025-05-01T15:00:00Z', '/pricing', as('f-f')),
      pageview(s, 'fg1', '2025-05-01T15:00:00Z', '/pricing', as('f-g')), // same ts, imported first
      event(s, 'fg1', '2025-05-01T15:00:00Z', 'signup', as('f-g')),
      pageview(s, 'fh1', '2025-04-30T23:59:00Z', '/pricing', as('f-h')), // step 1 before `from`
      event(s, 'fh1', '2025-05-01T00:30:00Z', 'signup', as('f-h')),
      // 05-03, steps /blog/* → /pricing → signup.
      pageview(s, 'fi1', '2025-05-03T10:00:00Z', '/blog/a', as('f-i')),
      pageview(s, 'fi1', '2025-05-03T10:05:00Z', '/pricing', as('f-i')),
      event(s, 'fi2', '2025-05-03T10:10:00Z', 'signup', as('f-i')),
      pageview(s, 'fj1', '2025-05-03T10:00:00Z', '/blog', as('f-j')),
      pageview(s, 'fj1', '2025-05-03T10:05:00Z', '/pricing', as('f-j')),
      pageview(s, 'fk1', '2025-05-03T11:00:00Z', '/blog/x/y', as('f-k')),
      pageview(s, 'fk1', '2025-05-03T11:05:00Z', '/pricing', as('f-k')),
      pageview(s, 'fl1', '2025-05-03T11:00:00Z', '/blogger', as('f-l')),
      pageview(s, 'fl1', '2025-05-03T11:05:00Z', '/pricing', as('f-l')),
      event(s, 'fl1', '2025-05-03T11:10:00Z', 'signup', as('f-l')),
      // 05-05, steps /pricing → /pricing.
      pageview(s, 'fm1', '2025-05-05T10:00:00Z', '/pricing', as('f-m')),
      pageview(s, 'fn1', '2025-05-05T10:00:00Z', '/pricing', as('f-n')),
      pageview(s, 'fn1', '2025-05-05T10:30:00Z', '/pricing', as('f-n')),
    ];
  }
});
