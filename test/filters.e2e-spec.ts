import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { event, pageview, purchase } from './support/hits';
import { parseCsv } from './support/csv';
import {
  attributeKey,
  attributeKeySql,
  md5,
  parseFilters,
  resolveRange,
  ROLLUP_DIMENSIONS,
  sessionSelected,
  StatsQuery,
  StatsQueryParser,
} from '@app/stats';
import { engagementStatements } from '../apps/api/src/analytics/engagement.queries';
import { overviewStatements, TopList } from '../apps/api/src/analytics/overview.queries';
import { sql } from 'kysely';
import { createHash } from 'node:crypto';
import { SESSION_ENGAGEMENT_COLUMNS } from '@app/stats/sql/session-engagement';
import { TEST_ENGINE, TestEnv } from './support/test-env';
import { sharedStatements } from '@app/stats/stats.repository';
import { sketchCover } from '@app/stats/rollups/visitor-sketch';
import { LISTED_COMBINATIONS } from '@app/stats/sql/session-filter';

/**
 * SPEC §3 Filters on every report, with numbers worked out by hand. A UTC site; the range is
 * 2026-05-04..2026-05-05; the previous period 2026-05-02..2026-05-03.
 *
 * | session | visitor | start (UTC)  | country   | channel  | source       | device  | browser   | pageviews in range          | bounce | entry → exit         | goals        | orders         |
 * | A0      | v-A     | 05-02 08:00  | FR        | Social   | old          | desktop | Chrome    | (before the range) /home    | yes    | /home → /home        |              |                |
 * | A       | v-A     | 05-04 10:00  | DE        | Search   | google       | desktop | Chrome    | /blog/a, /pricing           | no     | /blog/a → /pricing   | signup, price| o1 10.00 10:03 |
 * | B       | v-B     | 05-04 11:00  | FR        | Social   | twitter      | mobile  | Safari    | /blog/b                     | yes    | /blog/b → /blog/b    |              |                |
 * | G       | v-B     | 05-04 12:00  | US        | Referral | news.example | desktop | Chrome    | /pricing                    | yes    | /pricing → /pricing  | price        |                |
 * | C       | v-C     | 05-05 09:00  | US        | Direct   | (direct)     | desktop | Firefox   | /, /docs/x                  | no     | / → /docs/x          |              | o2 25.50 09:10 |
 * | D       | v-D     | 05-05 12:00  | (unknown) | Search   | bing         | tablet  | (unknown) | none (one signup event)     | no     | none                 | signup       |                |
 * | E       | v-E     | 05-03 23:50  | DE        | Direct   | (direct)     | mobile  | Chrome    | /blog/c at 05-04 00:10      | —      | /pricing → /blog/c   | price        | o3 5.00 00:15  |
 * | F       | v-F     | 05-05 15:00  | GB        | Referral | news_x%      | desktop | Édge 浏览器:1 | /blog/%_lit                 | yes    | same                 |              |                |
 *
 * E starts before the range: it is no session of the range, but its in-range pageview and
 * order count whenever E is selected. A0 makes v-A a returning visitor whatever the filters.
 * Time on page / scroll depth: A /blog/a 30 s / 80, A /pricing 10 s / 20, B — / 30, E /pricing
 * (before the range) 100 s / 90, E /blog/c 40 s / 60; no other pageview carries either.
 */
describe('filters (SPEC §3)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;
  let signup: number;
  let price: number;
  let foreignGoal: number;
  let user: Awaited<ReturnType<TestEnv['user']>>;

  const RANGE = { from: '2026-05-04', to: '2026-05-05' };
  /** Imports hits, none of them refused. */
  const importedAll = async (hits: Array<ReturnType<typeof pageview>>) =>
    expect((await env.importHits(hits)).rejections).toEqual([]);
  /** A pageview's attributes for the NL mobile sessions of several attribute conditions, with its engagement. */
  const seenNl = (time_on_page_seconds: number, scroll_depth: number) => ({
    country: 'NL',
    channel: 'Email',
    source: 'letter',
    device: 'mobile',
    browser: 'Safari',
    time_on_page_seconds,
    scroll_depth,
  });

  beforeAll(async () => {
    env = await TestEnv.create();
    user = await env.user();
    site = await env.site({ members: [user] });
    const other = await env.site({ members: [user] });
    key = (await env.key(user)).key;
    signup = await env.goal(site, 'Signed up', 'event', 'signup');
    price = await env.goal(site, 'Saw pricing', 'path', '/pricing');
    foreignGoal = await env.goal(other, 'Elsewhere', 'event', 'signup');
    await env.registerEvent(site, 'signup');

    const attrs = (
      country: string | undefined,
      channel: string,
      source: string | undefined,
      device: string,
      browser?: string,
    ) => ({
      ...(country === undefined ? {} : { country }),
      channel,
      ...(source === undefined ? {} : { source }),
      device,
      ...(browser === undefined ? {} : { browser }),
    });
    const a0 = { ...attrs('FR', 'Social', 'old', 'desktop', 'Chrome'), visitor_id: 'v-A' };
    const a = { ...attrs('DE', 'Search', 'google', 'desktop', 'Chrome'), visitor_id: 'v-A' };
    const b = { ...attrs('FR', 'Social', 'twitter', 'mobile', 'Safari'), visitor_id: 'v-B' };
    const g = { ...attrs('US', 'Referral', 'news.example', 'desktop', 'Chrome'), visitor_id: 'v-B' };
    const c = attrs('US', 'Direct', undefined, 'desktop', 'Firefox');
    const d = attrs(undefined, 'Search', 'bing', 'tablet');
    const e = attrs('DE', 'Direct', undefined, 'mobile', 'Chrome');
    const f = attrs('GB', 'Referral', 'news_x%', 'desktop', 'Édge 浏览器:1');
    const imported = await env.importHits([
      pageview(site, 'A0', '2026-05-02T08:00:00Z', '/home', a0),
      pageview(site, 'A', '2026-05-04T10:00:00Z', '/blog/a', {
        ...a,
        time_on_page_seconds: 30,
        scroll_depth: 80,
      }),
      pageview(site, 'A', '2026-05-04T10:01:00Z', '/pricing', {
        ...a,
        time_on_page_seconds: 10,
        scroll_depth: 20,
      }),
      event(site, 'A', '2026-05-04T10:02:00Z', 'signup', a),
      purchase(site, 'A', '2026-05-04T10:03:00Z', 'o1', '10.00', a),
      pageview(site, 'B', '2026-05-04T11:00:00Z', '/blog/b', { ...b, scroll_depth: 30 }),
      pageview(site, 'G', '2026-05-04T12:00:00Z', '/pricing', g),
      pageview(site, 'C', '2026-05-05T09:00:00Z', '/', c),
      pageview(site, 'C', '2026-05-05T09:05:00Z', '/docs/x', c),
      purchase(site, 'C', '2026-05-05T09:10:00Z', 'o2', '25.50', c),
      event(site, 'D', '2026-05-05T12:00:00Z', 'signup', d),
      pageview(site, 'E', '2026-05-03T23:50:00Z', '/pricing', {
        ...e,
        time_on_page_seconds: 100,
        scroll_depth: 90,
      }),
      pageview(site, 'E', '2026-05-04T00:10:00Z', '/blog/c', {
        ...e,
        time_on_page_seconds: 40,
        scroll_depth: 60,
      }),
      purchase(site, 'E', '2026-05-04T00:15:00Z', 'o3', '5.00', e),
      pageview(site, 'F', '2026-05-05T15:00:00Z', '/blog/%_lit', f),
      // The other site's DE session must never show here.
      pageview(other, 'X', '2026-05-04T10:00:00Z', '/blog/a', { country: 'DE', channel: 'Search' }),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const get = (path: string, params: Record<string, string | number>) =>
    request(app.getHttpServer())
      .get(`/api/v1/sites/${site}${path}`)
      .query(params)
      .set('Authorization', `Bearer ${key}`);

  const overview = async (filters: string, extra: Record<string, string> = {}) => {
    const res = await get('/analytics/overview', { ...RANGE, filters, ...extra });
    expect(res.status).toBe(200);
    return res.body as {
      data: Record<string, number> & { comparison?: Record<string, unknown>; top_countries: unknown[] };
      meta: { filters: unknown[] };
    };
  };

  describe('overview: each dimension and operator', () => {
    it('without filters counts every session of the range, and meta.filters is []', async () => {
      const { data, meta } = await overview('');
      expect(data).toMatchObject({
        sessions: 6,
        visitors: 5,
        pageviews: 8,
        bounce_rate: 50,
        pages_per_session: 1.17,
        avg_session_duration_seconds: 130,
      });
      expect(meta.filters).toEqual([]);
    });

    it.each([
      // [filters, sessions, visitors, pageviews, bounce_rate]
      ['country==DE', 1, 1, 3, 0],
      ['country!=DE', 5, 4, 5, 60],
      ['country==(unknown)', 1, 1, 0, 0],
      ['country==DE|FR', 2, 2, 4, 50],
      ['country==F*', 1, 1, 1, 100],
      ['source==(direct)', 1, 1, 3, 0],
      ['source!=(direct)', 5, 4, 5, 60],
      ['source==news_x%', 1, 1, 1, 100],
      ['source==news%', 0, 0, 0, 0],
      ['source==news*', 2, 2, 2, 100],
      ['source==news_*', 1, 1, 1, 100],
      ['channel==Search|Social', 3, 3, 3, 33.33],
      ['device==desk*', 4, 4, 6, 50],
      ['browser==(unknown)', 1, 1, 0, 0],
      ['entry_page==/blog/*', 3, 3, 4, 66.67],
      ['entry_page!=/blog/*', 3, 3, 4, 33.33],
      ['exit_page==/pricing', 2, 2, 3, 50],
      ['exit_page!=/pricing', 4, 4, 5, 50],
      ['exit_page==/pricing|/blog/b', 3, 2, 4, 66.67],
      ['entry_page==/blog/a|/pricing', 2, 2, 4, 50],
      // One whole entry or exit path reads the rows under it whose session entered (left) by it,
      // in session_pages: A saw /pricing but entered by /blog/a; E entered by /pricing before the
      // range, its pageview in the range counts.
      ['entry_page==/pricing', 1, 1, 2, 100],
      ['entry_page==/blog/a', 1, 1, 2, 0],
      ['page==/pricing', 2, 2, 4, 50],
      ['page!=/pricing', 4, 4, 4, 50],
      ['page==/blog/%_lit', 1, 1, 1, 100],
      ['page==/blog/%*', 1, 1, 1, 100],
      ['page==/blog/_*', 0, 0, 0, 0],
      // A prefix reads, of its paths' rows in session_pages, each session's first under it: A and
      // C saw two paths under `/` and count once; A counts under `/p` by /pricing, its second.
      ['page==/*', 5, 4, 8, 60],
      ['page==/blog/*', 3, 3, 5, 66.67],
      ['page==/p*', 2, 2, 4, 50],
      ['page==/nowhere/*', 0, 0, 0, 0],
      // Several values read, of their rows, each session's first under them: A saw /blog/a and
      // /pricing and counts once; so does C under / and /docs/*. /blog/a is under /blog/*.
      ['page==/pricing|/blog/a', 2, 2, 4, 50],
      ['page==/blog/*|/', 4, 4, 7, 50],
      ['page==/|/docs/*', 1, 1, 2, 0],
      ['page==/blog/a|/pricing|/blog/*', 4, 3, 6, 75],
      ['page==/pricing|/blog/*;device==desktop', 3, 3, 4, 66.67],
      // Conditions on attributes beside a page condition are tested on its rows: E (DE) is no
      // session of the range, its pageview in it counts.
      ['page==/pricing;country==DE', 1, 1, 3, 0],
      ['page==/*;device==desktop', 4, 4, 6, 50],
      ['page==/blog/*;country!=DE', 2, 2, 2, 100],
      ['country==DE|FR;device==mobile', 1, 1, 2, 100],
      ['device==desktop;device!=desktop', 0, 0, 0, 0],
    ])('%s', async (filters, sessions, visitors, pageviews, bounceRate) => {
      const { data } = await overview(filters);
      expect({
        sessions: data.sessions,
        visitors: data.visitors,
        pageviews: data.pageviews,
        bounce_rate: data.bounce_rate,
      }).toEqual({ sessions, visitors, pageviews, bounce_rate: bounceRate });
    });

    it('goal conditions select the sessions that converted (or did not)', async () => {
      const sessions = async (filters: string) => (await overview(filters)).data.sessions;
      expect(await sessions(`goal==${signup}`)).toBe(2); // A, D
      expect(await sessions(`goal!=${signup}`)).toBe(4); // B, G, C, F
      expect(await sessions(`goal==${price}`)).toBe(2); // A, G (E starts before the range)
      expect(await sessions(`goal==${signup}|${price}`)).toBe(3); // A, D, G
    });

    it('computes the headline and the top lists over the selected sessions', async () => {
      const { data } = await overview('country==DE');
      expect(data).toMatchObject({ pages_per_session: 2, avg_session_duration_seconds: 180 });
      expect(data.top_countries).toEqual([{ value: 'DE', sessions: 1, share: 100 }]);
      expect((data as unknown as { top_channels: unknown[] }).top_channels).toEqual([
        { value: 'Search', sessions: 1, share: 100 },
      ]);
      expect((data as unknown as { entry_pages: unknown[] }).entry_pages).toEqual([
        { value: '/blog/a', sessions: 1, share: 100 },
      ]);
    });

    it('lists the sessions of a page condition by attribute and by entry and exit page', async () => {
      // From session_pages: A, B and F saw a page under /blog/ (E's session started before the
      // range); grouped by their combinations' hash and entry and exit pages' hash, then named.
      const { data } = (await overview('page==/blog/*')) as unknown as {
        data: Record<string, Array<{ value: string; sessions: number; share: number }>>;
      };
      const third = { sessions: 1, share: 33.33 };
      expect(data.top_countries).toEqual(['DE', 'FR', 'GB'].map((value) => ({ value, ...third })));
      expect(data.top_channels).toEqual(
        ['Referral', 'Search', 'Social'].map((value) => ({ value, ...third })),
      );
      expect(data.top_sources).toEqual(
        ['google', 'news_x%', 'twitter'].map((value) => ({ value, ...third })),
      );
      expect(data.top_devices).toEqual([
        { value: 'desktop', sessions: 2, share: 66.67 },
        { value: 'mobile', sessions: 1, share: 33.33 },
      ]);
      expect(data.entry_pages).toEqual(
        ['/blog/%_lit', '/blog/a', '/blog/b'].map((value) => ({ value, ...third })),
      );
      expect(data.exit_pages).toEqual(
        ['/blog/%_lit', '/blog/b', '/pricing'].map((value) => ({ value, ...third })),
      );
    });

    it("lists the sessions of page!= one path as the site's lists less the path's", async () => {
      // page!=/pricing: B (FR, Social, twitter, mobile, /blog/b), C (US, Direct, (direct), desktop,
      // / to /docs/x), D ((unknown), Search, bing, tablet, no pageview: no entry or exit page)
      // and F (GB, Referral, news_x%, desktop, /blog/%_lit). A (DE, google, /blog/a to /pricing)
      // and G (US, /pricing) saw /pricing: DE, google, /blog/a and /pricing sum to 0 and are no
      // values; US and Search keep C and D.
      const { data } = (await overview('page!=/pricing')) as unknown as {
        data: Record<string, Array<{ value: string; sessions: number; share: number }>>;
      };
      const quarter = { sessions: 1, share: 25 };
      expect(data.top_countries).toEqual(
        ['(unknown)', 'FR', 'GB', 'US'].map((value) => ({ value, ...quarter })),
      );
      expect(data.top_channels).toEqual(
        ['Direct', 'Referral', 'Search', 'Social'].map((value) => ({ value, ...quarter })),
      );
      expect(data.top_sources).toEqual(
        ['(direct)', 'bing', 'news_x%', 'twitter'].map((value) => ({ value, ...quarter })),
      );
      expect(data.top_devices).toEqual([
        { value: 'desktop', sessions: 2, share: 50 },
        { value: 'mobile', ...quarter },
        { value: 'tablet', ...quarter },
      ]);
      expect(data.entry_pages).toEqual(
        ['/', '/blog/%_lit', '/blog/b'].map((value) => ({ value, ...quarter })),
      );
      expect(data.exit_pages).toEqual(
        ['/blog/%_lit', '/blog/b', '/docs/x'].map((value) => ({ value, ...quarter })),
      );
    });

    it('lists entry and exit pages apart past their first 200 characters where each session is tested', async () => {
      // entry_page==/* tests each session's row, and its lists group the pages by their first 200
      // characters with the MD5 of a longer path beside them (pathGroupKey): paths that share
      // those characters stay apart, as they do on the raw path, which groups by the path.
      const long = await env.site({ members: [user] });
      const p200 = `/${'x'.repeat(199)}`;
      const p201 = `${p200}z`;
      const y1 = `/${'y'.repeat(299)}a`;
      const y2 = `/${'y'.repeat(299)}b`;
      const visits: Array<[string, string]> = [
        ['S1', y1],
        ['S2', y1],
        ['S3', y2],
        ['S4', p200],
        ['S5', p201],
      ];
      await importedAll(
        visits.map(([id, path], i) =>
          pageview(long, id, `2026-05-04T1${i}:00:00Z`, path, { visitor_id: `v-${id}` }),
        ),
      );
      await env.aggregate();
      const lists = async () => {
        const res = await request(app.getHttpServer())
          .get(`/api/v1/sites/${long}/analytics/overview`)
          .query({ ...RANGE, filters: 'entry_page==/*' })
          .set('Authorization', `Bearer ${key}`);
        expect(res.status).toBe(200);
        const data = res.body.data as Record<string, unknown>;
        return { sessions: data.sessions, entry: data.entry_pages, exit: data.exit_pages };
      };
      const fifth = { sessions: 1, share: 20 };
      // By sessions, then by path in binary order: 'x' < 'y', and p200 is a prefix of p201.
      const expected = [
        { value: y1, sessions: 2, share: 40 },
        { value: p200, ...fifth },
        { value: p201, ...fifth },
        { value: y2, ...fifth },
      ];
      expect(await lists()).toEqual({ sessions: 5, entry: expected, exit: expected });
    });

    it('echoes the parsed filters in meta.filters', async () => {
      const { meta } = await overview('country==DE|FR;entry_page==/blog/*;page!=/a\\;b');
      expect(meta.filters).toEqual([
        { dimension: 'country', operator: '==', values: ['DE', 'FR'] },
        { dimension: 'entry_page', operator: '==', values: ['/blog/*'] },
        { dimension: 'page', operator: '!=', values: ['/a\\;b'] },
      ]);
    });

    it('filters the comparison range the same way (compare=previous_period)', async () => {
      const { data } = await overview('country==DE', { compare: 'previous_period' });
      // Previous period 05-02..05-03: of the DE sessions only E starts then; its /pricing is at 05-03 23:50.
      expect(data.comparison).toMatchObject({
        from: '2026-05-02',
        to: '2026-05-03',
        sessions: 1,
        pageviews: 1,
        change: expect.objectContaining({ sessions: 0, pageviews: 200 }) as unknown,
      });
    });
  });

  describe('breakdown-timeseries', () => {
    const breakdown = async (params: Record<string, string>) => {
      const res = await get('/analytics/breakdown-timeseries', { ...RANGE, ...params });
      expect(res.status).toBe(200);
      return (res.body as { data: { series: Array<{ value: string; total: number; points: number[] }> } })
        .data.series;
    };

    it('a filtered dimension gives its values and an all-zero Other', async () => {
      expect(
        await breakdown({ metric: 'sessions', dimension: 'country', filters: 'country==DE|FR' }),
      ).toEqual([
        { value: 'DE', total: 1, points: [1, 0] },
        { value: 'FR', total: 1, points: [1, 0] },
        { value: 'Other', total: 0, points: [0, 0] },
      ]);
    });

    it("ranks and sums the values of a page or goal condition's sessions, ties by value, the rest as Other", async () => {
      // page==/blog/*: A (DE, desktop, 05-04), B (FR, mobile, bounced, 05-04), F (GB, desktop,
      // bounced, 05-05), read from session_pages; goal==price: A (DE) and G (US, bounced), each
      // session tested. One statement ranks the values and sums their series (rankedSeriesSums).
      expect(
        await breakdown({ metric: 'sessions', dimension: 'device', filters: 'page==/blog/*', limit: '1' }),
      ).toEqual([
        { value: 'desktop', total: 2, points: [1, 1] },
        { value: 'Other', total: 1, points: [1, 0] },
      ]);
      expect(
        await breakdown({ metric: 'sessions', dimension: 'country', filters: 'page==/blog/*', limit: '2' }),
      ).toEqual([
        { value: 'DE', total: 1, points: [1, 0] },
        { value: 'FR', total: 1, points: [1, 0] },
        { value: 'Other', total: 1, points: [0, 1] },
      ]);
      // Ranked by sessions (desktop 2), not by the rate (mobile 100 %).
      expect(
        await breakdown({ metric: 'bounce_rate', dimension: 'device', filters: 'page==/blog/*', limit: '1' }),
      ).toEqual([
        { value: 'desktop', total: 50, points: [0, 100] },
        { value: 'Other', total: 100, points: [100, 0] },
      ]);
      expect(
        await breakdown({ metric: 'sessions', dimension: 'country', filters: `goal==${price}`, limit: '1' }),
      ).toEqual([
        { value: 'DE', total: 1, points: [1, 0] },
        { value: 'Other', total: 1, points: [1, 0] },
      ]);
    });

    it("under page!= one path, the site's sessions less the path's: a value all of whose sessions saw it is no value", async () => {
      // page!=/pricing: B (FR, mobile, bounced, 05-04), C (US, desktop, 05-05), D ((unknown),
      // tablet, 05-05) and F (GB, desktop, bounced, 05-05); A (DE) and G (US) saw /pricing. The
      // site's session rollup rows less the path's session_pages rows (sessionPagesComplement):
      // DE sums to 0 and is left out as the raw path leaves it, not ranked fifth.
      expect(
        await breakdown({ metric: 'sessions', dimension: 'country', filters: 'page!=/pricing', limit: '5' }),
      ).toEqual([
        { value: '(unknown)', total: 1, points: [0, 1] },
        { value: 'FR', total: 1, points: [1, 0] },
        { value: 'GB', total: 1, points: [0, 1] },
        { value: 'US', total: 1, points: [0, 1] },
        { value: 'Other', total: 0, points: [0, 0] },
      ]);
      expect(
        await breakdown({ metric: 'sessions', dimension: 'country', filters: 'page!=/pricing', limit: '2' }),
      ).toEqual([
        { value: '(unknown)', total: 1, points: [0, 1] },
        { value: 'FR', total: 1, points: [1, 0] },
        { value: 'Other', total: 2, points: [0, 2] },
      ]);
      // desktop: C and F, F bounced; Other: B (mobile, bounced) on the 4th, D (tablet) on the 5th.
      expect(
        await breakdown({
          metric: 'bounce_rate',
          dimension: 'device',
          filters: 'page!=/pricing',
          limit: '1',
        }),
      ).toEqual([
        { value: 'desktop', total: 50, points: [0, 50] },
        { value: 'Other', total: 50, points: [100, 0] },
      ]);
    });

    it('pageviews take their session attribute; only the selected sessions count', async () => {
      expect(await breakdown({ metric: 'pageviews', dimension: 'device', filters: 'country==DE' })).toEqual([
        { value: 'desktop', total: 2, points: [2, 0] },
        { value: 'mobile', total: 1, points: [1, 0] },
        { value: 'Other', total: 0, points: [0, 0] },
      ]);
    });

    it('revenue of the orders of selected sessions', async () => {
      expect(
        await breakdown({ metric: 'revenue', dimension: 'country', filters: 'device==desktop' }),
      ).toEqual([
        { value: 'US', total: 25.5, points: [0, 25.5] },
        { value: 'DE', total: 10, points: [10, 0] },
        { value: 'Other', total: 0, points: [0, 0] },
      ]);
    });

    it('conv_rate over the selected sessions', async () => {
      const series = await breakdown({
        metric: 'conv_rate',
        dimension: 'channel',
        filters: `page==/pricing`,
      });
      // A (Search) converted, G (Referral) converted.
      expect(series).toEqual([
        { value: 'Referral', total: 100, points: [100, 0] },
        { value: 'Search', total: 100, points: [100, 0] },
        { value: 'Other', total: 0, points: [0, 0] },
      ]);
    });
  });

  it('conversions: sessions and goals of the selected sessions', async () => {
    const res = await get('/conversions', { ...RANGE, filters: 'device==desktop' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sessions: 4, converted_sessions: 2, conversion_rate: 50 });
    expect(
      (res.body.data.goals as Array<{ id: number; conversions: number }>).map((g) => [g.id, g.conversions]),
    ).toEqual([
      [signup, 1],
      [price, 2],
    ]);
  });

  it('conversions under goal conditions: the converted goals of the selected sessions', async () => {
    const conversions = async (filters: string) => {
      const res = await get('/conversions', { ...RANGE, filters });
      expect(res.status).toBe(200);
      const { data } = res.body as {
        data: {
          sessions: number;
          converted_sessions: number;
          goals: Array<{ id: number; conversions: number }>;
        };
      };
      return [data.sessions, data.converted_sessions, ...data.goals.map((g) => g.conversions)];
    };
    // [sessions, converted, signup, price]
    expect(await conversions(`goal==${signup}`)).toEqual([2, 2, 2, 1]); // A, D
    expect(await conversions(`goal!=${signup}`)).toEqual([4, 1, 0, 1]); // B, G, C, F
    expect(await conversions(`goal==${signup}|${price}`)).toEqual([3, 3, 2, 2]); // A, D, G
    expect(await conversions(`goal==${price};goal!=${signup}`)).toEqual([1, 1, 0, 1]); // G
    expect(await conversions(`goal!=${signup};goal!=${price}`)).toEqual([3, 0, 0, 0]); // B, C, F
    expect(await conversions(`goal!=${signup};goal==${price};goal==${price}`)).toEqual([1, 1, 0, 1]); // G
  });

  /**
   * Under filters, conversions and breakdown conv_rate read the converted settled sessions from
   * the goals stored for them (session_goals; under conditions on goals only, the selected
   * ones), or under conditions on attributes only from the goal attribute rollups, and the
   * queued ones from their hits; a goal created since the last `aggregate`, not stored yet, is
   * read from the hits.
   */
  it('conversions under goal conditions: stored goals, queued sessions, a goal not rolled up yet', async () => {
    const shop = await env.site({ members: [user] });
    const signedUp = await env.goal(shop, 'Signed up', 'event', 'signup');
    const priced = await env.goal(shop, 'Saw pricing', 'path', '/pricing');
    const de = { country: 'DE', channel: 'Direct', device: 'desktop' };
    const first = await env.importHits([
      pageview(shop, 'P', '2026-05-04T10:00:00Z', '/pricing', de),
      event(shop, 'P', '2026-05-04T10:01:00Z', 'signup', de),
      pageview(shop, 'Q', '2026-05-04T11:00:00Z', '/home', de),
      pageview(shop, 'R', '2026-05-05T09:00:00Z', '/pricing', de),
      // Before the range: converts both goals, selected by neither condition's counts.
      pageview(shop, 'T', '2026-05-03T23:00:00Z', '/pricing', de),
      event(shop, 'T', '2026-05-03T23:01:00Z', 'signup', de),
    ]);
    expect(first.rejections).toEqual([]);
    await env.aggregate();
    const conversions = async (filters: string) => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${shop}/conversions`)
        .query({ ...RANGE, filters })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const { data } = res.body as {
        data: { sessions: number; converted_sessions: number; goals: Array<{ conversions: number }> };
      };
      return [data.sessions, data.converted_sessions, ...data.goals.map((g) => g.conversions)];
    };
    // conv_rate by channel (everyone's Direct) and day: the same converted sessions.
    const convRate = async (filters: string) => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${shop}/analytics/breakdown-timeseries`)
        .query({ ...RANGE, metric: 'conv_rate', dimension: 'channel', limit: 1, filters })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const { series } = (
        res.body as { data: { series: Array<{ value: string; total: number; points: number[] }> } }
      ).data;
      expect(series.map((s) => s.value)).toEqual(['Direct', 'Other']);
      return [series[0].total, ...series[0].points];
    };
    // [sessions, converted, signup, price]: P both, Q none, R price.
    expect(await conversions(`goal==${signedUp}`)).toEqual([1, 1, 1, 1]); // P
    expect(await conversions(`goal!=${signedUp}`)).toEqual([2, 1, 0, 1]); // Q, R
    // The stored goals are what is read: without R's row, R no longer saw pricing.
    const rows = { site: shop, session: 'R', goal: priced };
    await env.ds.query('DELETE FROM session_goals WHERE site_id = ? AND session_id = ? AND goal_id = ?', [
      rows.site,
      rows.session,
      rows.goal,
    ]);
    try {
      expect(await conversions(`goal==${priced}`)).toEqual([1, 1, 1, 1]); // P only
      // Q and R; the rollups built before still count R's conversion (the raw path: [1, 0, 0, 0]).
      expect(await conversions(`goal!=${priced}`)).toEqual([2, 1, 0, 1]);
      // Under other filters too, the converted sessions are read from the stored goals (the raw
      // path: [3, 2, 1, 2]); the sessions from the rollups.
      const pages = 'page==/pricing|/home'; // P, Q, R
      expect(await conversions(pages)).toEqual([3, 1, 1, 1]);
      // So does breakdown conv_rate: P of P, Q on the 4th, none of R on the 5th (the raw
      // path: [66.67, 50, 100]).
      expect(await convRate(pages)).toEqual([33.33, 50, 0]);
      // Under conditions on attributes only, the goal attribute rollups count them, built before
      // as the unfiltered rollups were: R still converted.
      expect(await conversions('country==DE')).toEqual([3, 2, 1, 2]);
      expect(await convRate('country==DE')).toEqual([66.67, 50, 100]);
      expect(await convRate(`goal!=${signedUp}`)).toEqual([0, 0, 0]); // Q, R (raw: [50, 0, 100])
    } finally {
      await env.ds.query(
        `INSERT INTO session_goals (site_id, session_id, goal_id, started_at)
         SELECT site_id, session_id, ?, started_at FROM sessions WHERE site_id = ? AND session_id = ?`,
        [rows.goal, rows.site, rows.session],
      );
    }

    // Q signs up late, and a new session U signs up: Q is queued, U not derived yet.
    const late = await env.importHits([
      event(shop, 'Q', '2026-05-04T11:05:00Z', 'signup', de),
      event(shop, 'U', '2026-05-05T10:00:00Z', 'signup', de),
    ]);
    expect(late.rejections).toEqual([]);
    expect(await conversions(`goal==${signedUp}`)).toEqual([2, 2, 2, 1]); // P, Q
    expect(await conversions(`goal!=${signedUp}`)).toEqual([1, 1, 0, 1]); // R
    expect(await conversions(`goal!=${priced}`)).toEqual([1, 1, 1, 0]); // Q
    expect(await conversions(`goal==${signedUp};goal!=${priced}`)).toEqual([1, 1, 1, 0]); // Q
    expect(await conversions('country==DE')).toEqual([3, 3, 2, 2]); // P, Q, R
    expect(await conversions(`country==DE;goal!=${signedUp}`)).toEqual([1, 1, 0, 1]); // R
    expect(await convRate('country==DE')).toEqual([100, 100, 100]); // P, Q; R
    expect(await convRate(`country==DE;goal!=${priced}`)).toEqual([100, 100, 0]); // Q

    // A goal created now is stored at the next aggregate; until then its hits are read.
    const home = await env.goal(shop, 'Saw home', 'path', '/home');
    expect(await conversions(`goal==${home}`)).toEqual([1, 1, 1, 0, 1]); // Q
    expect(await conversions(`goal!=${home}`)).toEqual([2, 2, 1, 2, 0]); // P, R
    expect(await convRate('country==DE')).toEqual([100, 100, 100]); // P, Q; R
    await env.aggregate();
    expect(await conversions(`goal==${home}`)).toEqual([1, 1, 1, 0, 1]); // Q
    expect(await conversions(`goal!=${home}`)).toEqual([3, 3, 2, 2, 0]); // P, R, U
    expect(await conversions(`goal==${signedUp}`)).toEqual([3, 3, 3, 1, 1]); // P, Q, U
  });

  it('ecommerce: orders of the selected sessions by their own ts, purchasing sessions by start', async () => {
    const res = await get('/ecommerce', { ...RANGE, filters: 'country==DE' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      revenue: 15,
      orders: 2,
      average_order_value: 7.5,
      purchasing_sessions: 1,
      conversion_rate: 100,
      revenue_by_day: [
        { date: '2026-05-04', revenue: 15, orders: 2 },
        { date: '2026-05-05', revenue: 0, orders: 0 },
      ],
    });
  });

  it('events: occurrences and sessions of the selected sessions', async () => {
    const signups = async (filters: string) => {
      const res = await get('/events', { ...RANGE, filters });
      expect(res.status).toBe(200);
      const [row] = res.body.data as Array<{ name: string; occurrences: number; sessions: number }>;
      return [row.occurrences, row.sessions];
    };
    expect(await signups('')).toEqual([2, 2]);
    expect(await signups('country==(unknown)')).toEqual([1, 1]);
    expect(await signups(`goal==${price}`)).toEqual([1, 1]);
    expect(await signups('country==GB')).toEqual([0, 0]);
  });

  // The event hits of the selected sessions are read through those sessions: a session without
  // pageviews holds events too, one that started before the range holds its in-range events, and
  // one that ends after it holds events past its end. A settled session's are read from its
  // event buckets (two hits of K in one quarter hour, L's in two), a queued one's from its hits.
  it('events under filters: sessions without pageviews, one of them started before the range', async () => {
    const lone = await env.site({ members: [user] });
    await env.registerEvent(lone, 'signup');
    const nz = { country: 'NZ', channel: 'Direct', device: 'mobile' };
    const au = { country: 'AU', channel: 'Direct', device: 'desktop' };
    const imported = await env.importHits([
      event(lone, 'H', '2026-05-03T23:58:00Z', 'signup', nz),
      event(lone, 'H', '2026-05-04T00:05:00Z', 'signup', nz),
      event(lone, 'I', '2026-05-04T09:00:00Z', 'signup', nz),
      pageview(lone, 'J', '2026-05-04T09:30:00Z', '/x', au),
      event(lone, 'J', '2026-05-04T09:31:00Z', 'signup', au),
      event(lone, 'K', '2026-05-05T23:50:00Z', 'signup', nz),
      event(lone, 'K', '2026-05-05T23:52:00Z', 'signup', nz),
      event(lone, 'K', '2026-05-06T00:01:00Z', 'signup', nz),
      pageview(lone, 'L', '2026-05-04T09:59:00Z', '/y', nz),
      event(lone, 'L', '2026-05-04T10:00:00Z', 'signup', nz),
      event(lone, 'L', '2026-05-04T12:00:00Z', 'signup', nz),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    const signups = async (filters: string) => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${lone}/events`)
        .query({ ...RANGE, filters })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const [row] = res.body.data as Array<{ occurrences: number; sessions: number }>;
      return [row.occurrences, row.sessions];
    };
    expect(await signups('')).toEqual([7, 5]); // H's in-range event, I, J, K's two in-range events, L's two
    expect(await signups('country==NZ')).toEqual([6, 4]); // H, I, K, L (two quarter hours, once): no pageviews
    expect(await signups('country!=NZ')).toEqual([1, 1]); // J
    expect(await signups('page==/x')).toEqual([1, 1]); // J
    expect(await signups('page==/y')).toEqual([2, 1]); // L, from session_pages
    // page!= one path: the site's event rollups less the path's.
    expect(await signups('page!=/y')).toEqual([5, 4]); // H, I, J, K
    expect(await signups('page!=/x')).toEqual([6, 4]); // H, I, K, L
    // A late hit queues I: its events are read from its hits as they are now.
    const late = await env.importHits([event(lone, 'I', '2026-05-04T09:05:00Z', 'signup', nz)]);
    expect(late.rejections).toEqual([]);
    expect(await signups('')).toEqual([8, 5]);
    expect(await signups('country==NZ')).toEqual([7, 4]); // H, I twice, K twice, L twice
    expect(await signups('country!=NZ')).toEqual([1, 1]); // J
    expect(await signups('page!=/y')).toEqual([6, 4]); // H, I twice, J, K twice
    // K gains a pageview of /y while queued: left out of page!=/y, though counted there when derived.
    const gained = await env.importHits([pageview(lone, 'K', '2026-05-05T23:51:00Z', '/y', nz)]);
    expect(gained.rejections).toEqual([]);
    expect(await signups('page!=/y')).toEqual([4, 3]); // H, I twice, J
    expect(await signups('page==/y')).toEqual([4, 2]); // K twice, L twice
    expect(await signups('page!=/x')).toEqual([7, 4]); // H, I twice, K twice, L twice
    await env.aggregate();
    expect(await signups('page!=/y')).toEqual([4, 3]);
    expect(await signups('page==/y')).toEqual([4, 2]);
    expect(await signups('page!=/x')).toEqual([7, 4]);
  });

  it('engagement: a visitor is returning by their first session of any kind, whatever the filters', async () => {
    const returning = async (filters: string) => {
      const res = await get('/analytics/engagement', { ...RANGE, filters });
      expect(res.status).toBe(200);
      return res.body.data.returning_visitors as Record<string, number>;
    };
    expect(await returning('')).toEqual({ new_visitors: 4, returning_visitors: 1, returning_share: 20 });
    // v-A's first session (A0) is from FR and before the range: still returning under country==DE.
    expect(await returning('country==DE')).toEqual({
      new_visitors: 0,
      returning_visitors: 1,
      returning_share: 100,
    });
    expect(await returning('country==FR')).toEqual({
      new_visitors: 1,
      returning_visitors: 0,
      returning_share: 0,
    });
  });

  it("engagement: time on page and scroll depth over the selected sessions' pageviews of the range", async () => {
    const engagement = async (filters: string) => {
      const res = await get('/analytics/engagement', { ...RANGE, filters });
      expect(res.status).toBe(200);
      const data = res.body.data as {
        avg_time_on_page_seconds: number;
        scroll_depth: Array<{ bucket: string; pageviews: number }>;
      };
      return [data.avg_time_on_page_seconds, data.scroll_depth.map((b) => b.pageviews)];
    };
    // A's two pageviews and E's in-range one (E started before the range): (30 + 10 + 40) / 3.
    expect(await engagement('country==DE')).toEqual([26.67, [1, 0, 1, 1]]);
    // B (no time on page, scroll 30) and E's in-range pageview.
    expect(await engagement('device==mobile')).toEqual([40, [0, 1, 1, 0]]);
    expect(await engagement('country==DE;device==desktop')).toEqual([20, [1, 0, 0, 1]]);
    expect(await engagement('page==/blog/c')).toEqual([40, [0, 0, 1, 0]]);
    expect(await engagement('country==US')).toEqual([0, [0, 0, 0, 0]]);
  });

  // A plan, not a time: a page condition's sessions are read once from the hits' step index
  // (site, type, step_key, …, session_id), not looked up among the hits of each session.
  it("reads a page condition's sessions from the step index alone, not session by session", async () => {
    const filters = [
      {
        dimension: 'page' as const,
        operator: '==' as const,
        values: [
          { text: '/pricing', prefix: false },
          { text: '/blog/', prefix: true },
        ],
      },
    ];
    const selected = sessionSelected({ site: { id: site }, filters }, 's');
    const compiled = env.dialect.renderIndexHints(
      sql`SELECT COUNT(*) AS n FROM sessions s WHERE s.site_id = ${site} AND ${selected}`.compile(
        env.dialect.builder,
      ),
    );
    // A, G (/pricing) and B, E (/blog/…); the EXPLAIN below is of this statement.
    const [{ n }] = await env.ds.query<Array<{ n: number | string }>>(compiled.sql, [...compiled.parameters]);
    expect(Number(n)).toBe(5);
    if (TEST_ENGINE === 'sqlite') {
      const plan = (
        await env.ds.query<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${compiled.sql}`, [
          ...compiled.parameters,
        ])
      ).map((r) => r.detail);
      // Built once (an uncorrelated list) from the step index by site and type, with no session
      // id among its terms.
      expect(plan).toEqual(expect.arrayContaining([expect.stringMatching(/^LIST SUBQUERY/)]));
      const reads = plan.filter((d) => / fp /.test(d));
      expect(reads.length).toBeGreaterThan(0);
      for (const read of reads) {
        expect(read).toMatch(/^SEARCH fp USING (COVERING )?INDEX ix_hits_site_step \(site_id=\? AND type=\?/);
        expect(read).not.toMatch(/session_id/);
      }
    } else {
      const plan = await env.ds.query<
        Array<{ table: string; key: string; ref: string | null; Extra: string }>
      >(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]);
      const hits = plan.filter((r) => r.table === 'fp');
      expect(hits).toEqual([expect.objectContaining({ key: 'ix_hits_site_step' })]);
      expect(hits[0].Extra).toMatch(/Using index/);
      // Not looked up by session: the index is read by constants only (site, type, path).
      expect(hits[0].ref ?? '').not.toMatch(/session_id/);
    }
  });

  // Plans, not times: engagement under filters on two attributes (the rollups serve one).
  describe('engagement under several attributes: what MariaDB reads', () => {
    const query = (): StatsQuery => ({
      site: { id: site, timezone: 'UTC', currency: 'USD', trackingMode: 'full' },
      range: resolveRange({ ...RANGE, siteTimezone: 'UTC', maxDays: 731 }),
      filters: parseFilters('country==DE;device==desktop'),
    });
    const plan = async (statement: ReturnType<typeof engagementStatements.visitorReturns>) => {
      const compiled = env.dialect.renderIndexHints(statement(env.dialect));
      return env.ds.query<Array<{ table: string; type: string; key: string | null; Extra: string }>>(
        `EXPLAIN ${compiled.sql}`,
        [...compiled.parameters],
      );
    };

    // SQLite's planner takes no index to avoid (tableWithoutIndex), and reports no covering use.
    (TEST_ENGINE === 'sqlite' ? it.skip : it)(
      "reads time on page and scroll depth of the whole sessions from the attribute rollup, of the others' pageviews from the index alone",
      async () => {
        const rows = await plan(engagementStatements.pageviewEngagement(query()));
        const hits = rows.filter((r) => r.table === 'h');
        // One read of hits per kind of session (of the range, started before it, queued).
        expect(hits).toHaveLength(3);
        // The sessions whole in the range give their sums from the selected combinations' rows
        // of the attribute rollup (by key, or the day rows' index by combination).
        const rolledUp = rows.filter((r) => r.table === 'a');
        expect(rolledUp).toHaveLength(1);
        expect(rolledUp[0].key).toBe('PRIMARY');
        for (const read of hits) {
          expect(read).toEqual(expect.objectContaining({ key: 'ix_hits_site_session' }));
          expect(read.Extra).toMatch(/Using index/);
        }
      },
    );

    (TEST_ENGINE === 'sqlite' ? it.skip : it)(
      'reads the selected sessions alone, from the index by combination: no visitor looked up',
      async () => {
        const rows = await plan(engagementStatements.visitorReturns(query()));
        const sessions = rows.filter((r) => r.table === 's');
        expect(sessions).toHaveLength(1);
        expect(sessions[0]).toEqual(expect.objectContaining({ key: 'ix_sessions_site_combination' }));
        expect(sessions[0].Extra).toMatch(/Using index/);
        // Each session's visitor_first_at answers: the visitors table is not read. (Where it
        // reads the selected combinations, `fc`, is MariaDB's choice.)
        expect(rows.map((r) => r.table).filter((t) => t !== 'fc')).toEqual(['s']);
      },
    );

    // MariaDB's plan. SQLite reads the statement with INDEXED BY, which fails a statement the index
    // cannot serve: the returning counts below run it on both engines.
    (TEST_ENGINE === 'sqlite' ? it.skip : it)(
      'counts the returning visitors from the repeat sessions of the selected combinations alone',
      async () => {
        const rows = await plan(engagementStatements.returningVisitors(query()));
        const sessions = rows.filter((r) => r.table === 's');
        expect(sessions).toEqual([expect.objectContaining({ key: 'ix_sessions_site_repeat' })]);
        expect(sessions[0].Extra).toMatch(/Using index/);
        expect(rows.map((r) => r.table).filter((t) => t !== 'fc')).toEqual(['s']);
      },
    );
  });

  it('funnel: every step counts only hits of selected sessions', async () => {
    const funnel = async (filters: string) => {
      const res = await get('/analytics/funnel', {
        ...RANGE,
        filters,
        steps: JSON.stringify([
          { type: 'pageview', path: '/blog/*' },
          { type: 'pageview', path: '/pricing' },
        ]),
      });
      expect(res.status).toBe(200);
      return (res.body.data.steps as Array<{ visitors: number }>).map((s) => s.visitors);
    };
    expect(await funnel('')).toEqual([4, 2]); // v-A, v-B (via G), v-E, v-F; then v-A and v-B
    // v-B reaches /pricing only in G, a desktop session.
    expect(await funnel('device==mobile')).toEqual([2, 0]);
    expect(await funnel('country==DE')).toEqual([2, 1]);
  });

  it('CSV exports carry the filtered figures', async () => {
    const res = await get('/conversions', { ...RANGE, filters: 'device==desktop', format: 'csv' });
    expect(res.status).toBe(200);
    const rows = parseCsv(res.text);
    expect(rows[0]).toEqual(['id', 'name', 'type', 'match', 'conversions', 'conversion_rate']);
    expect(rows.slice(1).map((r) => [Number(r[0]), Number(r[4]), Number(r[5])])).toEqual([
      [signup, 1, 25],
      [price, 2, 50],
    ]);
  });

  it('the attribute rollup that serves several attribute conditions equals a rebuild from sessions', async () => {
    const rows = (sql: string) => env.ds.query<Array<Record<string, unknown>>>(sql, [site]);
    const kept = await rows(
      `SELECT HEX(attributes_hash) AS k, bucket, channel, source, country, device, browser, sessions, bounces,
         session_pageviews, duration_seconds, ${SESSION_ENGAGEMENT_COLUMNS.join(', ')}
       FROM session_attribute_rollups WHERE site_id = ? ORDER BY k, bucket`,
    );
    const rebuilt = env.sqlitePath
      ? await rebuildInTypeScript()
      : // As the migration builds it: the key's MD5 computed by the database from the same definition.
        await rows(
          `SELECT HEX(UNHEX(MD5(${attributeKeySql('s')}))) AS k,
         CAST(TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01', s.started_at) / 15) * 15, '1970-01-01') AS DATETIME) AS bucket,
         s.channel, s.source, s.country, s.device, s.browser, COUNT(*) AS sessions, SUM(s.is_bounce) AS bounces,
         SUM(s.pageviews) AS session_pageviews, SUM(s.duration_seconds) AS duration_seconds,
         ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `SUM(s.${c}) AS ${c}`).join(', ')}
       FROM sessions s WHERE s.site_id = ?
       GROUP BY k, bucket, s.channel, s.source, s.country, s.device, s.browser ORDER BY k, bucket`,
        );
    expect(kept).toHaveLength(8);
    const text = (list: Array<Record<string, unknown>>) =>
      list.map((r) =>
        Object.fromEntries(
          Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : String(v)]),
        ),
      );
    expect(text(kept)).toEqual(text(rebuilt));
    // The engagement sums are the pageviews' own: A's two timed pageviews (30 s, 10 s) and more.
    expect(kept.reduce((n, r) => n + Number(r.timed_pageviews), 0)).toBeGreaterThan(2);
    // Two conditions on two attributes are answered from it: the same numbers as the raw rows.
    expect((await overview('country==DE|FR;device==mobile')).data.sessions).toBe(1);
  });

  it("pageviews under conditions on several attributes: the rollup's whole sessions, the rest from their hits", async () => {
    // The whole sessions' pageviews come from the attribute rollup (pageviewsBySession); a
    // selected session that runs past the range's end, or that is queued with a late hit, is
    // taken out of it and counted from its hits of the range.
    const own = await env.site({ members: [user] });
    const nl = { country: 'NL', channel: 'Email', source: 'letter', device: 'mobile', browser: 'Safari' };
    const other = { ...nl, device: 'desktop' };
    const pageviewsOf = async () => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${own}/analytics/overview`)
        .query({ ...RANGE, filters: 'country==NL;device==mobile' })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      return { pageviews: res.body.data.pageviews as number, sessions: res.body.data.sessions as number };
    };
    await importedAll([
      // Whole in the range: 2.
      pageview(own, 'S1', '2026-05-04T10:00:00Z', '/a', nl),
      pageview(own, 'S1', '2026-05-04T10:03:00Z', '/b', nl),
      // Runs past the range's end (2026-05-06 00:00 UTC): 2 of its 3 in the range.
      pageview(own, 'S2', '2026-05-05T23:50:00Z', '/a', nl),
      pageview(own, 'S2', '2026-05-05T23:55:00Z', '/b', nl),
      pageview(own, 'S2', '2026-05-06T00:10:00Z', '/c', nl),
      // Gets a late hit below: 1, then 2.
      pageview(own, 'S3', '2026-05-04T14:00:00Z', '/a', nl),
      // Started before the range, ends in it: 1 of its 2.
      pageview(own, 'S4', '2026-05-03T23:55:00Z', '/a', nl),
      pageview(own, 'S4', '2026-05-04T00:05:00Z', '/b', nl),
      // Not selected (another device): none.
      pageview(own, 'S5', '2026-05-04T10:00:00Z', '/a', other),
      pageview(own, 'S5', '2026-05-04T10:01:00Z', '/b', other),
    ]);
    await env.aggregate();
    expect(await pageviewsOf()).toEqual({ pageviews: 6, sessions: 3 });
    // A late pageview of S3, not aggregated yet: S3 is queued, its row still says 1 pageview.
    await importedAll([pageview(own, 'S3', '2026-05-04T14:05:00Z', '/b', nl)]);
    const [queued] = await env.ds.query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM dirty_sessions WHERE site_id = ?',
      [own],
    );
    expect(Number(queued.n)).toBe(1);
    expect(await pageviewsOf()).toEqual({ pageviews: 7, sessions: 3 });
    await env.aggregate();
    expect(await pageviewsOf()).toEqual({ pageviews: 7, sessions: 3 });
  });

  it("time on page and scroll depth under conditions on several attributes: the rollup's whole sessions, the rest from their hits", async () => {
    // As the pageviews above (pageviewEngagementBySession): the whole sessions' engagement sums
    // come from the attribute rollup, less those of a selected session that runs past the
    // range's end or is queued with a late hit, whose pageviews of the range come from their hits.
    const own = await env.site({ members: [user] });
    const nl = { country: 'NL', channel: 'Email', source: 'letter', device: 'mobile', browser: 'Safari' };
    const other = { ...nl, device: 'desktop' };
    const engagementOf = async () => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${own}/analytics/engagement`)
        .query({ ...RANGE, filters: 'country==NL;device==mobile' })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const data = res.body.data as {
        avg_time_on_page_seconds: number;
        scroll_depth: Array<{ pageviews: number }>;
      };
      return [data.avg_time_on_page_seconds, data.scroll_depth.map((b) => b.pageviews)];
    };
    await importedAll([
      // Whole in the range: 10 s and 20 s, scrolled 10 % and 60 %.
      pageview(own, 'S1', '2026-05-04T10:00:00Z', '/a', seenNl(10, 10)),
      pageview(own, 'S1', '2026-05-04T10:03:00Z', '/b', seenNl(20, 60)),
      // Runs past the range's end (2026-05-06 00:00 UTC): its first two count.
      pageview(own, 'S2', '2026-05-05T23:50:00Z', '/a', seenNl(5, 30)),
      pageview(own, 'S2', '2026-05-05T23:55:00Z', '/b', seenNl(7, 80)),
      pageview(own, 'S2', '2026-05-06T00:10:00Z', '/c', seenNl(100, 100)),
      // Gets a late pageview below.
      pageview(own, 'S3', '2026-05-04T14:00:00Z', '/a', seenNl(3, 55)),
      // Started before the range, ends in it: its second counts.
      pageview(own, 'S4', '2026-05-03T23:55:00Z', '/a', seenNl(50, 5)),
      pageview(own, 'S4', '2026-05-04T00:05:00Z', '/b', seenNl(11, 26)),
      // Not selected (another device).
      pageview(own, 'S5', '2026-05-04T10:00:00Z', '/a', {
        ...other,
        time_on_page_seconds: 1000,
        scroll_depth: 99,
      }),
    ]);
    await env.aggregate();
    // (10 + 20 + 5 + 7 + 3 + 11) / 6; scrolled 10 | 30, 26 | 60, 55 | 80.
    expect(await engagementOf()).toEqual([9.33, [1, 2, 2, 1]]);
    // A late pageview of S3, not aggregated yet: S3 is queued, its row still holds one pageview.
    await importedAll([pageview(own, 'S3', '2026-05-04T14:05:00Z', '/b', seenNl(9, 90))]);
    // (56 + 9) / 7 = 9.2857…
    expect(await engagementOf()).toEqual([9.29, [1, 2, 2, 2]]);
    await env.aggregate();
    expect(await engagementOf()).toEqual([9.29, [1, 2, 2, 2]]);
  });

  it("finds the sessions that cross the range's start or end among those started within the site's longest session", async () => {
    // Under filters the statements look for a session that runs past the range's start or end
    // among those that started at most the site's longest session before it (site_session_bounds,
    // which aggregate raises): sessions of more than a day must be found, and one that a late hit
    // makes the longest must raise the bound.
    const own = await env.site({ members: [user] });
    const filters = 'country==NL;device==mobile';
    const report = async () => {
      const [overview, engagement] = await Promise.all(
        ['overview', 'engagement'].map((name) =>
          request(app.getHttpServer())
            .get(`/api/v1/sites/${own}/analytics/${name}`)
            .query({ ...RANGE, filters })
            .set('Authorization', `Bearer ${key}`),
        ),
      );
      expect([overview.status, engagement.status]).toEqual([200, 200]);
      const e = engagement.body.data as {
        avg_time_on_page_seconds: number;
        scroll_depth: Array<{ pageviews: number }>;
      };
      return {
        pageviews: overview.body.data.pageviews as number,
        timeOnPage: e.avg_time_on_page_seconds,
        scroll: e.scroll_depth.map((b) => b.pageviews),
      };
    };
    const longest = async () => {
      const [row] = await env.ds.query<Array<{ n: number | string }>>(
        'SELECT longest_seconds AS n FROM site_session_bounds WHERE site_id = ?',
        [own],
      );
      // Milliseconds on SQLite, as every seconds column there.
      return env.sqlitePath ? Number(row.n) / 1000 : Number(row.n);
    };
    await importedAll([
      // 25 hours, across the range's start (2026-05-04 00:00 UTC): its second pageview counts.
      pageview(own, 'L1', '2026-05-03T08:00:00Z', '/a', seenNl(10, 10)),
      pageview(own, 'L1', '2026-05-04T09:00:00Z', '/b', seenNl(20, 30)),
      // 26 hours, across the range's end (2026-05-06 00:00 UTC): its first pageview counts.
      pageview(own, 'L2', '2026-05-05T01:00:00Z', '/a', seenNl(5, 60)),
      pageview(own, 'L2', '2026-05-06T03:00:00Z', '/b', seenNl(7, 90)),
      // Short, inside the range.
      pageview(own, 'S', '2026-05-04T12:00:00Z', '/a', seenNl(1, 80)),
    ]);
    await env.aggregate();
    expect(await longest()).toBe(26 * 3600);
    // (20 + 5 + 1) / 3; scrolled 30 | 60 | 80.
    expect(await report()).toEqual({ pageviews: 3, timeOnPage: 8.67, scroll: [0, 1, 1, 1] });
    // S runs on for three days, past the range's end: the longest session now, and still found.
    await importedAll([pageview(own, 'S', '2026-05-07T12:00:00Z', '/c', seenNl(100, 100))]);
    expect(await report()).toEqual({ pageviews: 3, timeOnPage: 8.67, scroll: [0, 1, 1, 1] });
    await env.aggregate();
    expect(await longest()).toBe(72 * 3600);
    expect(await report()).toEqual({ pageviews: 3, timeOnPage: 8.67, scroll: [0, 1, 1, 1] });
  });

  describe('sessions by combination of attributes (migration 1767700000000)', () => {
    /** Each session's generated combination hash and its site's combination row, as hex text. */
    const combinationsOf = async (siteId: number) =>
      (
        await env.ds.query<Array<Record<string, string>>>(
          `SELECT s.session_id, HEX(s.attributes_hash) AS k, c.channel, c.source, c.country, c.device, c.browser,
             s.channel AS s_channel, s.source AS s_source, s.country AS s_country, s.device AS s_device,
             s.browser AS s_browser
           FROM sessions s LEFT JOIN attribute_combinations c
             ON c.site_id = s.site_id AND c.attributes_hash = s.attributes_hash
           WHERE s.site_id = ? ORDER BY s.session_id`,
          [siteId],
        )
      ).map((r): Record<string, string> => ({ ...r, k: String(r.k).toUpperCase() }));

    it("keys each session by the attribute rollups' hash, and holds its combination among its site's", async () => {
      const rows = await combinationsOf(site);
      expect(rows).toHaveLength(8);
      for (const r of rows) {
        const values = ROLLUP_DIMENSIONS.map((a) => r[`s_${a}`]);
        expect(r.k).toBe(createHash('md5').update(attributeKey(values), 'utf8').digest('hex').toUpperCase());
        // The combination row holds the session's own five values.
        expect(ROLLUP_DIMENSIONS.map((a) => r[a])).toEqual(values);
      }
      const [{ n }] = await env.ds.query<Array<{ n: number | string }>>(
        'SELECT COUNT(*) AS n FROM attribute_combinations WHERE site_id = ?',
        [site],
      );
      expect(Number(n)).toBe(new Set(rows.map((r) => r.k)).size);
      // Conditions that no combination meets select no session.
      expect((await overview('country==ZZ;device==mobile')).data.sessions).toBe(0);
    });

    it('adds the combination a late hit gives a session, and the filters select the session by it', async () => {
      const late = await env.site({ members: [user] });
      const later = {
        country: 'NL',
        channel: 'Email',
        source: 'letter',
        device: 'mobile',
        browser: 'Safari',
      };
      const earlier = {
        country: 'BE',
        channel: 'Social',
        source: 'mastodon',
        device: 'tablet',
        browser: 'Firefox',
      };
      expect(
        (
          await env.importHits([
            pageview(late, 'L', '2026-05-04T10:30:00Z', '/a', { ...later, visitor_id: 'v-L' }),
          ])
        ).rejections,
      ).toEqual([]);
      await env.aggregate();
      const sessionsUnder = async (filters: string) => {
        const res = await request(app.getHttpServer())
          .get(`/api/v1/sites/${late}/analytics/overview`)
          .query({ ...RANGE, filters })
          .set('Authorization', `Bearer ${key}`);
        expect(res.status).toBe(200);
        return {
          sessions: res.body.data.sessions as number,
          visitors: res.body.data.visitors as number,
          entries: (res.body.data.entry_pages as Array<{ value: string }>).map((p) => p.value),
        };
      };
      expect(await sessionsUnder('country==NL;device==mobile')).toEqual({
        sessions: 1,
        visitors: 1,
        entries: ['/a'],
      });
      // An earlier hit of the same session, with other attributes: the session's first hit now.
      expect(
        (
          await env.importHits([
            pageview(late, 'L', '2026-05-04T10:20:00Z', '/b', { ...earlier, visitor_id: 'v-L' }),
          ])
        ).rejections,
      ).toEqual([]);
      await env.aggregate();
      expect(await sessionsUnder('country==NL;device==mobile')).toEqual({
        sessions: 0,
        visitors: 0,
        entries: [],
      });
      expect(await sessionsUnder('country==BE;device==tablet')).toEqual({
        sessions: 1,
        visitors: 1,
        entries: ['/b'],
      });
      // Both combinations stay listed; the session has the new one.
      const [row] = await combinationsOf(late);
      expect([row.country, row.device]).toEqual(['BE', 'tablet']);
      const [{ n }] = await env.ds.query<Array<{ n: number | string }>>(
        'SELECT COUNT(*) AS n FROM attribute_combinations WHERE site_id = ?',
        [late],
      );
      expect(Number(n)).toBe(2);
    });

    // SQLite's planner reports no covering use in the same form; the statements are the same.
    (TEST_ENGINE === 'sqlite' ? it.skip : it)(
      "reads the selected sessions' entry pages from the combination path rows (whole site days) or the combinations' index alone, and the day rows and day sketches by combination",
      async () => {
        // As a request reads it: the two selected combinations listed (StatsQueryParser).
        const parse = (timezone?: string) =>
          app
            .get(StatsQueryParser)
            .parse(
              { id: site, timezone: 'UTC', currency: 'USD', trackingMode: 'full' },
              { ...RANGE, ...(timezone ? { timezone } : {}), filters: 'country==DE|FR;device==mobile' },
            );
        const query = await parse();
        expect(query.combinations).toHaveLength(2);
        const explain = async (lists: readonly TopList[], q = query) => {
          const compiled = env.dialect.renderIndexHints(
            overviewStatements.topLists(q, 10, lists)(env.dialect),
          );
          return env.ds.query<
            Array<{ table: string; key: string | null; key_len: string | null; Extra: string }>
          >(`EXPLAIN ${compiled.sql}`, [...compiled.parameters]);
        };
        // Whole site days: the selected combinations' rows of session_combination_path_day_rollups.
        const wholeDays = await explain(['entry_path']);
        expect(wholeDays.filter((r) => r.table === 'c')).toEqual([
          expect.objectContaining({ key: 'PRIMARY' }),
        ]);
        expect(wholeDays.some((r) => r.table === 's')).toBe(false);
        // Days of another zone are not whole site days: the sessions, from the combinations' index alone.
        const sessions = (await explain(['entry_path'], await parse('Asia/Kathmandu'))).filter(
          (r) => r.table === 's',
        );
        expect(sessions).toEqual([expect.objectContaining({ key: 'ix_sessions_site_combination' })]);
        expect(sessions[0].Extra).toMatch(/Using index/);
        // The attribute rollup's day rows and the day sketches of the selected combinations, each
        // a range of the primary key (site, combination, day) per combination: the key parts a
        // read uses, from MariaDB's JSON plan, the combination's before the day's.
        type Read = { table_name: string; key?: string; used_key_parts?: string[] };
        const readsOf = async (compiled: { sql: string; parameters: readonly unknown[] }, table: string) => {
          const [row] = await env.ds.query<Array<Record<string, string>>>(
            `EXPLAIN FORMAT=JSON ${compiled.sql}`,
            [...compiled.parameters],
          );
          const reads: Read[] = [];
          const walk = (node: unknown): void => {
            if (Array.isArray(node)) return node.forEach(walk);
            if (node === null || typeof node !== 'object') return;
            if ((node as Read).table_name === table) reads.push(node as Read);
            Object.values(node).forEach(walk);
          };
          walk(JSON.parse(Object.values(row)[0]));
          return reads;
        };
        const byCombination = (r: Read) =>
          r.key === 'PRIMARY' && r.used_key_parts?.slice(0, 2).join() === 'site_id,attributes_hash';
        for (const lists of [['country'], ['channel', 'source', 'country', 'device']] as const) {
          const reads = await readsOf(
            env.dialect.renderIndexHints(overviewStatements.topLists(query, 10, lists)(env.dialect)),
            'a',
          );
          expect(reads.some(byCombination)).toBe(true);
        }
        const cover = sketchCover(query.range.startUtc.getTime(), query.range.endUtc.getTime());
        const sketchReads = await readsOf(
          sharedStatements.combinationSketches(query, cover.days!)(env.dialect),
          'c',
        );
        expect(sketchReads).toHaveLength(1);
        expect(byCombination(sketchReads[0])).toBe(true);
      },
    );

    it("fills the sites' combinations from the sessions when it migrates", async () => {
      const listed = () =>
        env.ds.query<Array<Record<string, unknown>>>(
          `SELECT site_id, HEX(attributes_hash) AS k, channel, source, country, device, browser
           FROM attribute_combinations WHERE site_id = ? ORDER BY k`,
          [site],
        );
      const before = await listed();
      await env.migrateAgainFrom(/SessionsByCombination1767700000000$/);
      expect(await listed()).toEqual(before);
      expect(await combinationsOf(site)).toHaveLength(8);
      // The reports read them as before.
      expect((await overview('country==DE|FR;device==mobile')).data.sessions).toBe(1);
    });

    it("lists the combinations a condition on the country, the source or the channel selects from that attribute's index (migration 1768400000000)", async () => {
      const own = await env.site({ members: [user] });
      // 480 combinations: 40 countries × 4 channels × 3 devices, a source for each country and channel.
      const combinations: Array<Record<(typeof ROLLUP_DIMENSIONS)[number], string> & { hash: Buffer }> = [];
      for (let c = 0; c < 40; c++) {
        for (const [j, channel] of ['Direct', 'Email', 'Social', 'Referral'].entries()) {
          for (const device of ['desktop', 'mobile', 'tablet']) {
            const values = {
              channel,
              source: `s${(c + j) % 40}`,
              country: `C${c}`,
              device,
              browser: 'Firefox',
            };
            const key = attributeKey(ROLLUP_DIMENSIONS.map((a) => values[a]));
            combinations.push({ ...values, hash: md5(key) });
          }
        }
      }
      const columns = ['site_id', 'attributes_hash', ...ROLLUP_DIMENSIONS];
      await env.ds.query(
        `INSERT INTO attribute_combinations (${columns.join(', ')}) VALUES ${combinations
          .map(() => `(${columns.map(() => '?').join(', ')})`)
          .join(', ')}`,
        combinations.flatMap((r) => [own, r.hash, ...ROLLUP_DIMENSIONS.map((a) => r[a])]),
      );
      const statement = (filters: string) =>
        env.dialect.renderIndexHints(
          sharedStatements.selectedCombinations(
            { site: { id: own }, filters: parseFilters(filters) },
            LISTED_COMBINATIONS,
          )(env.dialect),
        );
      const cases = [
        {
          filters: 'country==C7;device!=mobile;channel==Direct|Email',
          index: 'ix_attribute_combinations_country',
          selects: (r: (typeof combinations)[number]) =>
            r.country === 'C7' && r.device !== 'mobile' && ['Direct', 'Email'].includes(r.channel),
        },
        {
          filters: 'source==s3;device==mobile',
          index: 'ix_attribute_combinations_source',
          selects: (r: (typeof combinations)[number]) => r.source === 's3' && r.device === 'mobile',
        },
        {
          filters: 'channel==Email;device!=tablet',
          index: 'ix_attribute_combinations_channel',
          selects: (r: (typeof combinations)[number]) => r.channel === 'Email' && r.device !== 'tablet',
        },
      ];
      for (const { filters, selects } of cases) {
        const compiled = statement(filters);
        const rows = await env.ds.query<Array<{ k: string }>>(compiled.sql, [...compiled.parameters]);
        const expected = combinations.filter(selects).map((r) => r.hash.toString('hex'));
        expect(expected.length).toBeGreaterThan(1);
        expect(rows.map((r) => String(r.k).toLowerCase()).sort()).toEqual(expected.sort());
      }
      // MariaDB's plan: the named values' entries of the index alone, not every combination of the
      // site. (SQLite's planner may take either; the lists above are the same on both engines.)
      if (TEST_ENGINE === 'sqlite') return;
      await env.ds.query('ANALYZE TABLE attribute_combinations');
      for (const { filters, index } of cases) {
        const compiled = statement(filters);
        const plan = await env.ds.query<Array<{ key: string | null; Extra: string }>>(
          `EXPLAIN ${compiled.sql}`,
          [...compiled.parameters],
        );
        expect(plan).toEqual([expect.objectContaining({ key: index })]);
        expect(plan[0].Extra).toMatch(/Using index/);
      }
    });
  });

  describe("sessions keep their pageviews' engagement and their visitor's first session (migration 1767800000000)", () => {
    /** Seconds from a stored time on page (SQLite keeps milliseconds). */
    const seconds = (v: unknown) => (TEST_ENGINE === 'sqlite' ? Number(v) / 1000 : Number(v));
    const keptOf = async (siteId: number) =>
      (
        await env.ds.query<Array<Record<string, unknown>>>(
          `SELECT s.session_id, s.visitor_id, s.timed_pageviews, s.time_on_page_seconds,
             s.scroll_0_24, s.scroll_25_49, s.scroll_50_74, s.scroll_75_100,
             s.visitor_first_at, v.first_session_at
           FROM sessions s LEFT JOIN visitors v ON v.site_id = s.site_id AND v.visitor_id = s.visitor_id
           WHERE s.site_id = ? ORDER BY s.session_id`,
          [siteId],
        )
      ).map((r) => ({
        session: r.session_id,
        visitor: r.visitor_id,
        timed: Number(r.timed_pageviews),
        seconds: seconds(r.time_on_page_seconds),
        scroll: [r.scroll_0_24, r.scroll_25_49, r.scroll_50_74, r.scroll_75_100].map(Number),
        // The copy equals the visitors table's row.
        firstCopied:
          r.visitor_first_at !== null &&
          JSON.stringify(r.visitor_first_at) === JSON.stringify(r.first_session_at),
      }));
    const engagementOf = async (siteId: number, filters: string) => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${siteId}/analytics/engagement`)
        .query({ ...RANGE, filters })
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const data = res.body.data as {
        avg_time_on_page_seconds: number;
        scroll_depth: Array<{ bucket: string; pageviews: number }>;
        returning_visitors: { new_visitors: number; returning_visitors: number };
      };
      return {
        avg: data.avg_time_on_page_seconds,
        scroll: data.scroll_depth.map((b) => b.pageviews),
        new: data.returning_visitors.new_visitors,
        returning: data.returning_visitors.returning_visitors,
      };
    };
    /**
     * The returning split's statement where the visitors are estimated by combination (read from
     * the repeat sessions, migration 1768300000000), run as is, and each session's is_repeat.
     */
    const returnersOf = async (siteId: number, filters: string) => {
      const query: StatsQuery = {
        site: { id: siteId, timezone: 'UTC', currency: 'USD', trackingMode: 'full' },
        range: resolveRange({ ...RANGE, siteTimezone: 'UTC', maxDays: 731 }),
        filters: parseFilters(filters),
      };
      const compiled = env.dialect.renderIndexHints(
        engagementStatements.returningVisitors(query)(env.dialect),
      );
      const [row] = await env.ds.query<Array<{ returners: number | string }>>(compiled.sql, [
        ...compiled.parameters,
      ]);
      return Number(row.returners);
    };
    const repeatsOf = async (siteId: number) =>
      (
        await env.ds.query<Array<{ session_id: string; is_repeat: number | string | null }>>(
          'SELECT session_id, is_repeat FROM sessions WHERE site_id = ? ORDER BY session_id',
          [siteId],
        )
      ).map((r) => [r.session_id, r.is_repeat === null ? null : Number(r.is_repeat)]);

    it("holds the sums of each session of the table above, and its visitor's first session", async () => {
      const zero = { timed: 0, seconds: 0, scroll: [0, 0, 0, 0], firstCopied: true };
      expect(await keptOf(site)).toEqual([
        { session: 'A', visitor: 'v-A', timed: 2, seconds: 40, scroll: [1, 0, 0, 1], firstCopied: true },
        { session: 'A0', visitor: 'v-A', ...zero },
        { session: 'B', visitor: 'v-B', ...zero, scroll: [0, 1, 0, 0] },
        { session: 'C', visitor: 'v-C', ...zero },
        { session: 'D', visitor: 'v-D', ...zero },
        { session: 'E', visitor: 'v-E', timed: 2, seconds: 140, scroll: [0, 0, 1, 1], firstCopied: true },
        { session: 'F', visitor: 'v-F', ...zero },
        { session: 'G', visitor: 'v-B', ...zero },
      ]);
    });

    /** The NL mobile sessions' attributes of the late-session cases below. */
    const nl = { country: 'NL', channel: 'Email', source: 'letter', device: 'mobile', browser: 'Safari' };
    /** Imports hits, none refused, and aggregates them. */
    const imported = async (hits: Array<ReturnType<typeof pageview>>) => {
      expect((await env.importHits(hits)).rejections).toEqual([]);
      await env.aggregate();
    };

    it('keeps them as late hits add pageviews, move a first session earlier and change a visitor', async () => {
      const late = await env.site({ members: [user] });
      const under = 'country==NL;device==mobile';
      await imported([
        pageview(late, 'M2', '2026-05-04T10:00:00Z', '/a', {
          ...nl,
          visitor_id: 'v-M',
          time_on_page_seconds: 12,
          scroll_depth: 55,
        }),
      ]);
      expect(await engagementOf(late, under)).toEqual({
        avg: 12,
        scroll: [0, 0, 1, 0],
        new: 1,
        returning: 0,
      });
      expect(await returnersOf(late, under)).toBe(0);
      expect(await repeatsOf(late)).toEqual([['M2', 0]]);
      // A second pageview of M2, and an earlier session of v-M before the range (another
      // country): v-M is returning now, its first session moved to M1's start.
      await imported([
        pageview(late, 'M2', '2026-05-04T10:05:00Z', '/b', {
          ...nl,
          visitor_id: 'v-M',
          time_on_page_seconds: 8,
          scroll_depth: 10,
        }),
        pageview(late, 'M1', '2026-05-02T09:00:00Z', '/a', { ...nl, country: 'BE', visitor_id: 'v-M' }),
      ]);
      expect(await engagementOf(late, under)).toEqual({
        avg: 10,
        scroll: [1, 0, 1, 0],
        new: 0,
        returning: 1,
      });
      // M2 is a repeat visit now, and the statement of the repeat sessions finds v-M returning.
      expect(await returnersOf(late, under)).toBe(1);
      expect(await repeatsOf(late)).toEqual([
        ['M1', 0],
        ['M2', 1],
      ]);
      expect(await keptOf(late)).toEqual([
        { session: 'M1', visitor: 'v-M', timed: 0, seconds: 0, scroll: [0, 0, 0, 0], firstCopied: true },
        { session: 'M2', visitor: 'v-M', timed: 2, seconds: 20, scroll: [1, 0, 1, 0], firstCopied: true },
      ]);
      // An earlier hit of M2 from another visitor: M2 is v-N's now, its first session.
      await imported([
        pageview(late, 'M2', '2026-05-04T09:55:00Z', '/c', { ...nl, visitor_id: 'v-N', scroll_depth: 30 }),
      ]);
      expect(await engagementOf(late, under)).toEqual({
        avg: 10,
        scroll: [1, 1, 1, 0],
        new: 1,
        returning: 0,
      });
      expect(await returnersOf(late, under)).toBe(0);
      expect(await repeatsOf(late)).toEqual([
        ['M1', 0],
        ['M2', 0],
      ]);
      expect(await keptOf(late)).toEqual([
        { session: 'M1', visitor: 'v-M', timed: 0, seconds: 0, scroll: [0, 0, 0, 0], firstCopied: true },
        { session: 'M2', visitor: 'v-N', timed: 2, seconds: 20, scroll: [1, 1, 1, 0], firstCopied: true },
      ]);
    });

    /** Each session's rows in session_pages, and whether each one's copy of its visitor's first session equals the visitors table's row. */
    const pageRowsOf = async (siteId: number) =>
      (
        await env.ds.query<Array<Record<string, unknown>>>(
          `SELECT p.session_id, p.page_key, p.visitor_id, p.visitor_first_at, v.first_session_at
           FROM session_pages p LEFT JOIN visitors v ON v.site_id = p.site_id AND v.visitor_id = p.visitor_id
           WHERE p.site_id = ? ORDER BY p.session_id, p.page_key`,
          [siteId],
        )
      ).map((r) => ({
        session: r.session_id,
        page: r.page_key,
        visitor: r.visitor_id,
        firstCopied:
          r.visitor_first_at !== null &&
          JSON.stringify(r.visitor_first_at) === JSON.stringify(r.first_session_at),
      }));

    it("keeps the visitor's first session in session_pages as late sessions move it (migration 1769000000000)", async () => {
      const late = await env.site({ members: [user] });
      // Under page==/a engagement reads M2's row in session_pages (its copy), not v-M's row in visitors.
      const split = async () => {
        const { new: fresh, returning } = await engagementOf(late, 'page==/a');
        return { new: fresh, returning };
      };
      await imported([pageview(late, 'M2', '2026-05-04T10:00:00Z', '/a', { ...nl, visitor_id: 'v-M' })]);
      expect(await split()).toEqual({ new: 1, returning: 0 });
      // An earlier session of v-M before the range, and nothing new for M2: M2's row is not
      // written again, and v-M is returning now.
      await imported([pageview(late, 'M1', '2026-05-02T09:00:00Z', '/z', { ...nl, visitor_id: 'v-M' })]);
      expect(await split()).toEqual({ new: 0, returning: 1 });
      expect(await pageRowsOf(late)).toEqual([
        { session: 'M1', page: '/z', visitor: 'v-M', firstCopied: true },
        { session: 'M2', page: '/a', visitor: 'v-M', firstCopied: true },
      ]);
      // An earlier hit of M1 from another visitor: M1 is v-N's, and v-M's first session is M2 again.
      await imported([pageview(late, 'M1', '2026-05-02T08:55:00Z', '/z', { ...nl, visitor_id: 'v-N' })]);
      expect(await split()).toEqual({ new: 1, returning: 0 });
      expect(await pageRowsOf(late)).toEqual([
        { session: 'M1', page: '/z', visitor: 'v-N', firstCopied: true },
        { session: 'M2', page: '/a', visitor: 'v-M', firstCopied: true },
      ]);
      const copies = await pageRowsOf(late);
      await env.migrateAgainFrom(/SessionPageFirstSessions1769000000000$/);
      expect(await pageRowsOf(late)).toEqual(copies);
      expect(await split()).toEqual({ new: 1, returning: 0 });
    });

    it('counts a visitor once under page==/a by its first visit of the range, as late sessions move it (migration 1769100000000)', async () => {
      const visits = await env.site({ members: [user] });
      // The overview's visitors and engagement's split under page==/a, both from the rows'
      // prior visits, not from a distinct count of their visitor ids.
      const counted = async () => {
        const res = await request(app.getHttpServer())
          .get(`/api/v1/sites/${visits}/analytics/overview`)
          .query({ ...RANGE, filters: 'page==/a' })
          .set('Authorization', `Bearer ${key}`);
        expect(res.status).toBe(200);
        const { new: fresh, returning } = await engagementOf(visits, 'page==/a');
        return { visitors: res.body.data.visitors as number, new: fresh, returning };
      };
      // Each row's prior visit, named by the session of /a that started then.
      const priorVisits = async () =>
        (
          await env.ds.query<Array<Record<string, unknown>>>(
            `SELECT p.session_id, p.visitor_id,
               (SELECT o.session_id FROM session_pages o
                WHERE o.site_id = p.site_id AND o.page_key = p.page_key AND o.started_at = p.prior_visit_at) AS prior
             FROM session_pages p WHERE p.site_id = ? AND p.page_key = '/a' ORDER BY p.session_id`,
            [visits],
          )
        ).map((r) => ({ session: r.session_id, visitor: r.visitor_id, prior: r.prior }));
      await imported([
        pageview(visits, 'P2', '2026-05-04T10:00:00Z', '/a', { ...nl, visitor_id: 'v-P' }),
        pageview(visits, 'P3', '2026-05-05T09:00:00Z', '/a', { ...nl, visitor_id: 'v-P' }),
        pageview(visits, 'Q1', '2026-05-05T10:00:00Z', '/a', { ...nl, visitor_id: 'v-Q' }),
      ]);
      expect(await counted()).toEqual({ visitors: 2, new: 2, returning: 0 });
      expect(await priorVisits()).toEqual([
        { session: 'P2', visitor: 'v-P', prior: null },
        { session: 'P3', visitor: 'v-P', prior: 'P2' },
        { session: 'Q1', visitor: 'v-Q', prior: null },
      ]);
      // A late session of v-P under /a before the range: P2 follows it, still v-P's first of the range.
      await imported([pageview(visits, 'P1', '2026-05-02T09:00:00Z', '/a', { ...nl, visitor_id: 'v-P' })]);
      expect(await counted()).toEqual({ visitors: 2, new: 1, returning: 1 });
      // An earlier hit of P2 from v-R: P2 is v-R's, and v-P's P3 follows P1, before the range.
      await imported([pageview(visits, 'P2', '2026-05-04T09:55:00Z', '/a', { ...nl, visitor_id: 'v-R' })]);
      expect(await counted()).toEqual({ visitors: 3, new: 2, returning: 1 });
      const linked = [
        { session: 'P1', visitor: 'v-P', prior: null },
        { session: 'P2', visitor: 'v-R', prior: null },
        { session: 'P3', visitor: 'v-P', prior: 'P1' },
        { session: 'Q1', visitor: 'v-Q', prior: null },
      ];
      expect(await priorVisits()).toEqual(linked);
      await env.migrateAgainFrom(/SessionPagePriorVisits1769100000000$/);
      expect(await priorVisits()).toEqual(linked);
      expect(await counted()).toEqual({ visitors: 3, new: 2, returning: 1 });
    });

    it('fills them from the hits and the visitors when it migrates', async () => {
      const before = await keptOf(site);
      const report = await engagementOf(site, 'country==DE|US;device==desktop');
      await env.migrateAgainFrom(/SessionsEngagement1767800000000$/);
      expect(await keptOf(site)).toEqual(before);
      expect(await engagementOf(site, 'country==DE|US;device==desktop')).toEqual(report);
    });
  });

  /**
   * The rebuild on SQLite, which has no MD5: the sessions grouped here, keyed by the MD5 of
   * the same attributeKey the aggregator hashes, in 15-minute buckets of their start.
   */
  async function rebuildInTypeScript(): Promise<Array<Record<string, unknown>>> {
    const sessions = await env.ds.query<Array<Record<string, string | number | Date>>>(
      `SELECT channel, source, country, device, browser, started_at, is_bounce, pageviews, duration_seconds,
         ${SESSION_ENGAGEMENT_COLUMNS.join(', ')}
       FROM sessions WHERE site_id = ?`,
      [site],
    );
    const groups = new Map<string, Record<string, unknown>>();
    for (const s of sessions) {
      const values = ROLLUP_DIMENSIONS.map((a) => String(s[a]));
      const k = createHash('md5').update(attributeKey(values), 'utf8').digest('hex').toUpperCase();
      const at = (s.started_at as Date).getTime();
      const bucket = new Date(at - (at % (15 * 60_000)));
      const id = `${k}|${bucket.toISOString()}`;
      const g = groups.get(id) ?? {
        k,
        bucket,
        ...Object.fromEntries(ROLLUP_DIMENSIONS.map((a, i) => [a, values[i]])),
        sessions: 0,
        bounces: 0,
        session_pageviews: 0,
        duration_seconds: 0,
        ...Object.fromEntries(SESSION_ENGAGEMENT_COLUMNS.map((c) => [c, 0])),
      };
      g.sessions = Number(g.sessions) + 1;
      for (const c of SESSION_ENGAGEMENT_COLUMNS) g[c] = Number(g[c]) + Number(s[c]);
      g.bounces = Number(g.bounces) + Number(s.is_bounce);
      g.session_pageviews = Number(g.session_pageviews) + Number(s.pageviews);
      g.duration_seconds = Number(g.duration_seconds) + Number(s.duration_seconds);
      groups.set(id, g);
    }
    return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, g]) => g);
  }

  describe('400 naming filters', () => {
    it.each([
      ['an unknown dimension', 'city==Berlin'],
      ['a condition without an operator', 'country=DE'],
      ['an empty value', 'country=='],
      ['a goal id that is not a number', 'goal==signup'],
      ['a prefix on a goal', `goal==${String(signup)}*`],
      ['eleven conditions', Array.from({ length: 11 }, () => 'device==mobile').join(';')],
    ])('%s', async (_, filters) => {
      const res = await get('/analytics/overview', { ...RANGE, filters });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors).toEqual([{ parameter: 'filters', message: expect.any(String) as unknown }]);
    });

    it("another site's goal is not a goal of this site", async () => {
      const res = await get('/conversions', { ...RANGE, filters: `goal==${foreignGoal}` });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ parameter: 'filters' });
      expect(res.body.errors[0].message).toContain(String(foreignGoal));
    });

    it('every report but realtime takes filters; realtime calls it unknown', async () => {
      for (const path of [
        '/analytics/overview',
        '/analytics/engagement',
        '/conversions',
        '/ecommerce',
        '/events',
      ]) {
        expect((await get(path, { ...RANGE, filters: 'city==x' })).status).toBe(400);
        expect((await get(path, { ...RANGE, filters: 'country==DE' })).status).toBe(200);
      }
      const res = await get('/analytics/realtime', { filters: 'country==DE' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ parameter: 'filters' });
    });

    it('a repeated filters parameter is a 400', async () => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${site}/analytics/overview?filters=country==DE&filters=country==FR`)
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(400);
    });
  });
});
