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

  it('answers unknown routes with a problem+json 404', async () => {
    const res = await get('/api/v1/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 404, title: 'Not Found' });
  });

  it('serves the OpenAPI document with the bearer scheme and Swagger UI', async () => {
    const doc = await request(app.getHttpServer()).get('/api/docs-json');
    expect(doc.status).toBe(200);
    expect(doc.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
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
    expect(Object.keys(list.responses).sort()).toEqual(['200', '400', '401', '405', '406', '429', '503']);
    const ui = await request(app.getHttpServer()).get('/api/docs/');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger');
  });
});
