import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { pageview } from './support/hits';
import { TestEnv } from './support/test-env';

describe('Prometheus metrics at /metrics', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    key = (await env.key(user)).key;
    // Three sessions imported and not aggregated yet: the aggregation queue holds 3.
    const imported = await env.importHits([
      pageview(site, 'm1', '2026-03-01T10:00:00Z', '/'),
      pageview(site, 'm2', '2026-03-01T10:00:00Z', '/'),
      pageview(site, 'm2', '2026-03-01T10:01:00Z', '/a'),
      pageview(site, 'm3', '2026-03-01T10:00:00Z', '/'),
    ]);
    expect(imported.rejections).toEqual([]);
    app = await env.startApp({ DB_POOL_SIZE: '7' });
  });

  afterAll(() => env.close());

  const scrape = async () => {
    const res = await request(app.getHttpServer()).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    return res.text;
  };

  it('counts requests by method, route template and status, without a key', async () => {
    const server = app.getHttpServer();
    await request(server).get('/api/v1/sites').set('Authorization', `Bearer ${key}`);
    await request(server).get('/api/v1/sites').set('Authorization', `Bearer ${key}`);
    await request(server).get(`/api/v1/sites/${site}/events`).set('Authorization', `Bearer ${key}`);
    await request(server).get('/api/v1/sites');
    await request(server).get('/api/v1/nothing-here').set('Authorization', `Bearer ${key}`);
    const text = await scrape();
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/sites",status="200"} 2');
    expect(text).toContain('http_requests_total{method="GET",route="/api/v1/sites",status="401"} 1');
    // The template, not the URL with the site id: bounded label values.
    expect(text).toContain(
      'http_requests_total{method="GET",route="/api/v1/sites/:id/events",status="200"} 1',
    );
    expect(text).toContain('http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/sites",status="200"\} 2/,
    );
  });

  it('reports the database pool, its availability and the aggregation queue', async () => {
    const text = await scrape();
    expect(text).toContain('db_pool_connections{state="max"} 7');
    // The pool less two for report statements; none running between requests.
    expect(text).toContain('report_statements{state="max"} 5');
    expect(text).toContain('report_statements{state="running"} 0');
    expect(text).toContain('report_statements{state="waiting"} 0');
    expect(text).toMatch(/db_pool_connections\{state="in_use"\} \d+/);
    expect(text).toContain('db_available 1');
    expect(text).toContain('aggregation_queue_sessions 3');
    expect(text).toMatch(/aggregation_lag_seconds \d/);

    await env.aggregate();
    const after = await scrape();
    expect(after).toContain('aggregation_queue_sessions 0');
    expect(after).toContain('aggregation_lag_seconds 0');
  });

  it('is left out of the OpenAPI document', async () => {
    const doc = await request(app.getHttpServer()).get('/api/docs-json');
    expect(Object.keys(doc.body.paths)).not.toContain('/metrics');
  });
});
