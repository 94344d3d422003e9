import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { documentedRoutes, RouteUnderTest } from './support/routes';
import { TestEnv } from './support/test-env';

describe('API-key authentication and site access (every route)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let routes: RouteUnderTest[];
  let owner: number;
  let stranger: number;
  let ownSite: number;
  let foreignSite: number;
  let valid: string;
  let revoked: string;
  let expired: string;
  let strangerKey: string;

  beforeAll(async () => {
    env = await TestEnv.create();
    owner = await env.user();
    stranger = await env.user();
    ownSite = await env.site({ members: [owner] });
    foreignSite = await env.site({ members: [stranger] });
    valid = (await env.key(owner)).key;
    revoked = (await env.key(owner, { revoked: true })).key;
    expired = (await env.key(owner, { expiresAt: new Date(Date.now() - 60_000) })).key;
    strangerKey = (await env.key(stranger)).key;
    app = await env.startApp();
    routes = documentedRoutes(app);
  });

  afterAll(() => env.close());

  const expect401 = async (route: RouteUnderTest, authorization: string | undefined, detail: RegExp) => {
    const req = request(app.getHttpServer()).get(route.url(ownSite));
    if (authorization !== undefined) req.set('Authorization', authorization);
    const res = await req;
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    expect(res.body.detail).toMatch(detail);
  };

  it('documents at least the /sites route', () => {
    expect(routes.map((r) => r.template)).toContain('/api/v1/sites');
  });

  it('answers 401 without an Authorization header', async () => {
    for (const route of routes) await expect401(route, undefined, /Bearer/);
  });

  it('answers 401 for another scheme', async () => {
    for (const route of routes)
      await expect401(route, `Basic ${Buffer.from('a:b').toString('base64')}`, /Bearer scheme/);
  });

  it('answers 401 for a malformed key', async () => {
    for (const route of routes) await expect401(route, 'Bearer not-a-key', /malformed/);
  });

  it('answers 401 for a well-formed key that does not exist', async () => {
    const unknown = `sk_${'A'.repeat(43)}`;
    for (const route of routes) await expect401(route, `Bearer ${unknown}`, /not valid/);
  });

  it('answers 401 for a revoked key', async () => {
    for (const route of routes) await expect401(route, `Bearer ${revoked}`, /revoked/);
  });

  it('answers 401 for an expired key', async () => {
    for (const route of routes) await expect401(route, `Bearer ${expired}`, /expired/);
  });

  it('answers 200 for a valid key', async () => {
    for (const route of routes) {
      const res = await request(app.getHttpServer())
        .get(route.url(ownSite))
        .set('Authorization', `Bearer ${valid}`);
      expect({ route: route.template, status: res.status }).toEqual({ route: route.template, status: 200 });
      expect(res.body).toHaveProperty('data');
      expect(res.body).toHaveProperty('meta');
    }
  });

  it('returns 403 for a site of another user, and 404 for a site that does not exist, on every site route', async () => {
    for (const route of routes.filter((r) => r.siteScoped)) {
      const forbidden = await request(app.getHttpServer())
        .get(route.url(foreignSite))
        .set('Authorization', `Bearer ${valid}`);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.title).toBe('Forbidden');
      const missing = await request(app.getHttpServer())
        .get(route.url(999999))
        .set('Authorization', `Bearer ${valid}`);
      expect(missing.status).toBe(404);
      const bad = await request(app.getHttpServer())
        .get(route.url('abc'))
        .set('Authorization', `Bearer ${valid}`);
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([expect.objectContaining({ parameter: 'id' })]);
    }
  });

  it('checks 401 before 404 and 404 before 403', async () => {
    for (const route of routes.filter((r) => r.siteScoped)) {
      expect((await request(app.getHttpServer()).get(route.url(999999))).status).toBe(401);
      expect(
        (
          await request(app.getHttpServer())
            .get(route.url(999999))
            .set('Authorization', `Bearer ${strangerKey}`)
        ).status,
      ).toBe(404);
    }
  });

  it('returns 403 at once after the membership is removed', async () => {
    const user = await env.user();
    const site = await env.site({ members: [user] });
    const { key } = await env.key(user);
    const siteRoutes = routes.filter((r) => r.siteScoped);
    for (const route of siteRoutes) {
      expect(
        (await request(app.getHttpServer()).get(route.url(site)).set('Authorization', `Bearer ${key}`))
          .status,
      ).toBe(200);
    }
    await env.removeMember(site, user);
    for (const route of siteRoutes) {
      expect(
        (await request(app.getHttpServer()).get(route.url(site)).set('Authorization', `Bearer ${key}`))
          .status,
      ).toBe(403);
    }
    const list = await request(app.getHttpServer())
      .get('/api/v1/sites')
      .set('Authorization', `Bearer ${key}`);
    expect(list.body.data).toEqual([]);
  });

  it('records last_used_at at most once a minute per key', async () => {
    const user = await env.user();
    const { id, key } = await env.key(user);
    await request(app.getHttpServer()).get('/api/v1/sites').set('Authorization', `Bearer ${key}`);
    await new Promise((r) => setTimeout(r, 100));
    const [first] = await env.ds.query('SELECT last_used_at AS t FROM api_keys WHERE id = ?', [id]);
    expect(first.t).toBeInstanceOf(Date);
    await request(app.getHttpServer()).get('/api/v1/sites').set('Authorization', `Bearer ${key}`);
    await new Promise((r) => setTimeout(r, 100));
    const [second] = await env.ds.query('SELECT last_used_at AS t FROM api_keys WHERE id = ?', [id]);
    expect(second.t.getTime()).toBe(first.t.getTime());
  });

  it('answers requests that arrive together each from its own key, site and membership', async () => {
    // Lookups of concurrent requests are read in one statement (AccessRepository): every answer
    // must still be its own request's.
    const overview = (site: number) => `/api/v1/sites/${site}/analytics/overview`;
    const cases: Array<[string, string, number]> = [
      [overview(ownSite), valid, 200],
      [overview(foreignSite), valid, 403],
      [overview(ownSite), revoked, 401],
      [overview(foreignSite), strangerKey, 200],
      [overview(999_999_999), valid, 404],
      [overview(ownSite), expired, 401],
      [overview(ownSite), strangerKey, 403],
      ['/api/v1/sites', valid, 200],
      [overview(ownSite), `sk_${'x'.repeat(43)}`, 401],
    ];
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        [...cases, ...cases].map(([url, key]) =>
          request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual([...cases, ...cases].map(([, , status]) => status));
    }
  });
});
