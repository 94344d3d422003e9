import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { TestEnv } from './support/test-env';

describe('HTTP conventions: problem bodies, 400, 404, 405, pagination', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let siteIds: number[];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    const other = await env.user();
    siteIds = [];
    for (let i = 0; i < 5; i++) siteIds.push(await env.site({ name: `S${i}`, members: [user] }));
    await env.site({ name: 'not mine', members: [other] });
    key = (await env.key(user)).key;
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (url: string) => request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`);

  it('lists the sites of the key in id order with their fields', async () => {
    const res = await get('/api/v1/sites');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 100, total: 5 });
    expect(res.body.data.map((s: { id: number }) => s.id)).toEqual(siteIds);
    expect(res.body.data[0]).toEqual({
      id: siteIds[0],
      name: 'S0',
      domain: 'site.example',
      timezone: 'UTC',
      currency: 'USD',
      tracking_mode: 'full',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  it('paginates /sites with page and limit', async () => {
    const page2 = await get('/api/v1/sites?page=2&limit=2');
    expect(page2.body.meta).toEqual({ page: 2, limit: 2, total: 5 });
    expect(page2.body.data.map((s: { id: number }) => s.id)).toEqual(siteIds.slice(2, 4));
    const page3 = await get('/api/v1/sites?page=3&limit=2');
    expect(page3.body.data.map((s: { id: number }) => s.id)).toEqual(siteIds.slice(4));
    const beyond = await get('/api/v1/sites?page=9&limit=2');
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1e2', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['pgae=2', 'pgae'],
    ['limit=1&limit=2', 'limit'],
  ])('answers a problem+json 400 naming the parameter for ?%s', async (query, parameter) => {
    const res = await get(`/api/v1/sites?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(typeof res.body.detail).toBe('string');
    expect(res.body.errors).toEqual(expect.arrayContaining([{ parameter, message: expect.any(String) }]));
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'])(
    'answers 400 for ?%s=1, a name of Object.prototype, like any unknown parameter',
    async (name) => {
      for (const url of [`/api/v1/sites?${name}=1`, `/api/v1/sites/${siteIds[0]}/events?${name}=1`]) {
        const res = await get(url);
        expect({ url, status: res.status }).toEqual({ url, status: 400 });
        expect(res.body.errors).toEqual([{ parameter: name, message: `${name} is not a known parameter` }]);
      }
    },
  );

  it('names every offending parameter at once', async () => {
    const res = await get('/api/v1/sites?limit=0&page=x&extra=1');
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { parameter: string }) => e.parameter).sort()).toEqual([
      'extra',
      'limit',
      'page',
    ]);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('answers %s with 405 and Allow: GET, HEAD', async (method) => {
    const res = await request(app.getHttpServer())
      [method.toLowerCase() as 'post']('/api/v1/sites')
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.status).toBe(405);
  });

  it('answers 405 before authentication, also on site paths', async () => {
    const res = await request(app.getHttpServer()).delete(`/api/v1/sites/${siteIds[0]}/analytics/overview`);
    expect(res.status).toBe(405);
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await request(app.getHttpServer())
      .head('/api/v1/sites')
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
  });

  it('revalidates: a success has an ETag and Cache-Control, If-None-Match gets a 304 without a body', async () => {
    for (const accept of ['application/json', 'text/csv']) {
      const first = await get(`/api/v1/sites/${siteIds[0]}/events`).set('Accept', accept);
      expect(first.status).toBe(200);
      expect(first.headers['cache-control']).toBe('private, max-age=0, must-revalidate');
      const etag = first.headers.etag;
      // A cached report's ETag is strong, derived from the site's data version (issue #10).
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
      const again = await get(`/api/v1/sites/${siteIds[0]}/events`)
        .set('Accept', accept)
        .set('If-None-Match', etag);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['ratelimit-limit']).toBeDefined();
      const changed = await get(`/api/v1/sites/${siteIds[0]}/events`)
        .set('Accept', accept)
        .set('If-None-Match', 'W/"something-else"');
      expect(changed.status).toBe(200);
    }
  });

  it('answers errors with Cache-Control: no-store and no ETag', async () => {
    const res = await request(app.getHttpServer()).get('/api/v1/sites');
    expect(res.status).toBe(401);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  });

  it('answers unknown routes with a problem+json 404', async () => {
    const res = await get('/api/v1/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 404, title: 'Not Found' });
  });

  it('configures Swagger UI not to keep a pasted key in the browser (persistAuthorization off)', async () => {
    const init = await request(app.getHttpServer()).get('/api/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*false/);
  });

  it('serves the OpenAPI document with the bearer scheme and Swagger UI', async () => {
    const doc = await request(app.getHttpServer()).get('/api/docs-json');
    expect(doc.status).toBe(200);
    expect(doc.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Keys are opaque `sk_…` strings, not JWTs.
    expect(doc.body.components.securitySchemes.bearer.bearerFormat).toBeUndefined();
    const list = doc.body.paths['/api/v1/sites'].get;
    expect(list.security).toEqual([{ bearer: [] }]);
    expect(list.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'limit',
          schema: expect.objectContaining({ minimum: 1, maximum: 1000, default: 100 }),
        }),
      ]),
    );
    expect(Object.keys(list.responses).sort()).toEqual(
      ['200', '304', '400', '401', '405', '406', '408', '414', '429', '431', '499', '500', '503'].sort(),
    );
    const ui = await request(app.getHttpServer()).get('/api/docs/');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });
});
