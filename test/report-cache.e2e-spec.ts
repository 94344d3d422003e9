import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ReportDb } from '@app/stats';
import { DataSource } from 'typeorm';
import { ReportCacheInterceptor } from '../apps/api/src/report-cache/report-cache.interceptor';
import { event, pageview } from './support/hits';
import { TestEnv } from './support/test-env';

const RANGE = 'from=2026-03-10&to=2026-03-11';

describe(ReportCacheInterceptor.name, () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let keyId: number;
  let site: number;

  /**
   * The first request of a key records its use with a write of its own, not awaited by the
   * request (ApiKeyGuard.touch): wait for it, so that a busy machine cannot let it fall into
   * the statements counted next.
   */
  const keyUseRecorded = async () => {
    for (let tries = 0; tries < 500; tries++) {
      const [row] = await env.ds.query<Array<{ used: unknown }>>(
        'SELECT last_used_at AS used FROM api_keys WHERE id = ?',
        [keyId],
      );
      if (row.used !== null) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the key use was never recorded');
  };

  const get = (path: string, headers: Record<string, string> = {}) =>
    request(app.getHttpServer())
      .get(`/api/v1/sites/${site}${path}`)
      .set({ Authorization: `Bearer ${key}`, ...headers });

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    ({ id: keyId, key } = await env.key(user));
    await env.importHits([
      pageview(site, 'A', '2026-03-10T05:00:00Z', '/home'),
      event(site, 'A', '2026-03-10T05:01:00Z', 'signup'),
      pageview(site, 'B', '2026-03-10T06:00:00Z', '/pricing'),
    ]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  it('answers a repeated identical request from the cache: the same body and strong ETag, one statement (key, site, membership and data version) instead of the report queries', async () => {
    const first = await get(`/analytics/overview?${RANGE}`).expect(200);
    await keyUseRecorded();
    const reports = jest.spyOn(app.get(ReportDb), 'select');
    // Every other read of the API (keys, sites, memberships) takes a query runner.
    const runners = jest.spyOn(app.get(DataSource), 'createQueryRunner');
    const second = await get(`/analytics/overview?${RANGE}`).expect(200);
    const statements = runners.mock.results.length;
    const reportStatements = reports.mock.calls.length;
    reports.mockRestore();
    runners.mockRestore();

    expect(second.body).toEqual(first.body);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(first.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
    expect(reportStatements).toBe(0);
    expect(statements).toBe(1);
  });

  it('answers If-None-Match with the current ETag with 304 and no body', async () => {
    const first = await get(`/analytics/engagement?${RANGE}`).expect(200);
    const again = await get(`/analytics/engagement?${RANGE}`, { 'If-None-Match': first.headers.etag }).expect(
      304,
    );
    expect(again.text ?? '').toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
  });

  it('gives CSV and JSON of the same report different ETags, and serves both from the one cached answer', async () => {
    const json = await get(`/conversions?${RANGE}`).expect(200);
    const csv = await get(`/conversions?${RANGE}`, { Accept: 'text/csv' }).expect(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers.etag).not.toBe(json.headers.etag);
  });

  it('computes anew once an import and aggregate change the site: new numbers, new ETag', async () => {
    const before = await get(`/analytics/overview?${RANGE}`).expect(200);
    expect(before.body.data.sessions).toBe(2);

    await env.importHits([pageview(site, 'C', '2026-03-11T08:00:00Z', '/home')]);
    const imported = await get(`/analytics/overview?${RANGE}`).expect(200);
    // The import alone changes the pageviews (hits by their own ts), not yet the sessions.
    expect(imported.body.data.pageviews).toBe(3);
    expect(imported.body.data.sessions).toBe(2);
    expect(imported.headers.etag).not.toBe(before.headers.etag);

    await env.aggregate();
    const aggregated = await get(`/analytics/overview?${RANGE}`).expect(200);
    expect(aggregated.body.data.sessions).toBe(3);
    expect(aggregated.headers.etag).not.toBe(imported.headers.etag);
    await get(`/analytics/overview?${RANGE}`, { 'If-None-Match': before.headers.etag }).expect(200);
  });

  it('takes a goal created after the first answer into account without any rebuild', async () => {
    const before = await get(`/conversions?${RANGE}`).expect(200);
    expect(before.body.data.goals).toEqual([]);
    const goal = await env.goal(site, 'Signed up', 'event', 'signup');
    const after = await get(`/conversions?${RANGE}`).expect(200);
    expect(after.body.data.goals).toEqual([expect.objectContaining({ id: goal, conversions: 1 })]);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('keys on every parameter: another range is another answer', async () => {
    const both = await get(`/analytics/overview?${RANGE}`).expect(200);
    const one = await get('/analytics/overview?from=2026-03-10&to=2026-03-10').expect(200);
    expect(one.headers.etag).not.toBe(both.headers.etag);
    expect(one.body.meta.to).toBe('2026-03-10');
  });

  it('does not cache realtime, which reads live hits: every request queries them', async () => {
    await get('/analytics/realtime').expect(200);
    const queries = jest.spyOn(app.get(ReportDb), 'select');
    const res = await get('/analytics/realtime').expect(200);
    const count = queries.mock.calls.length;
    queries.mockRestore();
    expect(count).toBeGreaterThan(1);
    expect(res.headers.etag).toMatch(/^W\//);
  });

  describe('with REPORT_CACHE_MB=0', () => {
    let uncached: INestApplication;

    beforeAll(async () => {
      uncached = await env.startApp({ REPORT_CACHE_MB: '0' });
    });

    afterAll(async () => {
      await uncached.close();
      // startApp() made the uncached app the one env.close() closes; give it back the first.
      env.app = app;
    });

    it('computes every request (the ETag still lets clients revalidate)', async () => {
      const path = `/api/v1/sites/${site}/analytics/overview?${RANGE}`;
      await request(uncached.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`).expect(200);
      const queries = jest.spyOn(uncached.get(ReportDb), 'select');
      const res = await request(uncached.getHttpServer())
        .get(path)
        .set('Authorization', `Bearer ${key}`)
        .expect(200);
      const count = queries.mock.calls.length;
      queries.mockRestore();
      expect(count).toBeGreaterThan(1);
      expect(res.headers.etag).toMatch(/^"/);
    });
  });
});
