import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { ApiProcess, freePort, TestEnv } from './support/test-env';

const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

describe('Rate limits (RATE_LIMIT_PER_MINUTE, per key, per address without one)', () => {
  let env: TestEnv;
  let site: number;
  let keyA: string;
  let keyB: string;
  const apps: INestApplication[] = [];
  const processes: ApiProcess[] = [];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    keyA = (await env.key(user)).key;
    keyB = (await env.key(user)).key;
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    for (const p of processes.splice(0)) await p.stop('SIGKILL');
  });

  afterAll(() => env.close());

  /** A fresh app (fresh in-memory counters) with a limit of `limit` per minute. */
  const appWithLimit = async (limit: number) => {
    const app = await env.startApp({ RATE_LIMIT_PER_MINUTE: String(limit) });
    apps.push(app);
    return app;
  };
  const get = (app: INestApplication, url: string, key?: string) => {
    const req = request(app.getHttpServer()).get(url);
    return key ? req.set('Authorization', `Bearer ${key}`) : req;
  };

  it('counts every request of a key across routes and answers the one over the limit with a 429 problem', async () => {
    const app = await appWithLimit(5);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(app, i % 2 ? `/api/v1/sites/${site}/analytics/realtime` : '/api/v1/sites', keyA);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      remaining.push(res.headers['ratelimit-remaining']);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const over = await get(app, `/api/v1/sites/${site}/events`, keyA);
    expect(over.status).toBe(429);
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(over.body).toMatchObject({ type: 'about:blank', title: 'Too Many Requests', status: 429 });
    expect(over.body.detail).toMatch(/More than 5 requests/);
    const retryAfter = Number(over.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    expect(Number(over.headers['ratelimit-reset'])).toBe(retryAfter);

    // Another key of the same user, from the same address, has a window of its own.
    expect((await get(app, '/api/v1/sites', keyB)).status).toBe(200);
  });

  it('puts RateLimit-* on every /api/v1 response: 200, 400, 401, 403, 404 and 405', async () => {
    const app = await appWithLimit(100);
    const other = await env.site({ members: [await env.user()] });
    const responses = [
      await get(app, '/api/v1/sites', keyA),
      await get(app, '/api/v1/sites?limit=0', keyA),
      await get(app, '/api/v1/sites'),
      await get(app, `/api/v1/sites/${other}/events`, keyA),
      await get(app, '/api/v1/no-such-route', keyA),
      await request(app.getHttpServer()).post('/api/v1/sites').set('Authorization', `Bearer ${keyA}`),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 400, 401, 403, 404, 405]);
    for (const res of responses) for (const h of RATE_HEADERS) expect(res.headers).toHaveProperty(h);
  });

  it('limits requests without a key by client address, and the health probes not at all', async () => {
    const app = await appWithLimit(3);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(app, '/api/v1/sites')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    for (let i = 0; i < 10; i++) {
      const live = await request(app.getHttpServer()).get('/health/live');
      expect(live.status).toBe(200);
      expect(live.headers).not.toHaveProperty('ratelimit-limit');
    }
  });

  it('counts 401s of made-up keys against the address, so guessing keys is limited too', async () => {
    const app = await appWithLimit(3);
    const guess = () => `sk_${randomBytes(32).toString('base64url')}`;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(app, '/api/v1/sites', guess())).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another made-up key from that address is refused too; a valid key is not (below).
    const refused = await get(app, '/api/v1/sites', guess());
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect((await get(app, '/api/v1/sites', keyA)).status).toBe(200);
  });

  it('counts a request with a valid key only against its key: keyless floods from its address do not lock it out', async () => {
    const app = await appWithLimit(5);
    const keyless = [];
    for (let i = 0; i < 8; i++) keyless.push((await get(app, '/api/v1/sites')).status);
    expect(keyless).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const valid = await get(app, '/api/v1/sites', keyA);
    expect(valid.status).toBe(200);
    expect(valid.headers['ratelimit-remaining']).toBe('4');
    // And the key's own requests never count against the address.
    for (let i = 0; i < 3; i++) expect((await get(app, '/api/v1/sites', keyB)).status).toBe(200);
    expect((await get(app, '/api/v1/sites')).status).toBe(429);
  });

  it('never answers more 401s than the limit to concurrent made-up keys from one address (atomic count)', async () => {
    const limit = 20;
    // A process of its own, counting in memory (no Redis), so that the requests really overlap.
    const api = await env.spawnApi({ RATE_LIMIT_PER_MINUTE: String(limit), REDIS_URL: '' });
    processes.push(api);
    const url = `${api.url}/api/v1/sites`;
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(url, { headers: { Authorization: `Bearer sk_${randomBytes(32).toString('base64url')}` } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        ),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - limit);
  });

  it('keeps the 401 count atomic across two API processes sharing Redis', async () => {
    const limit = 20;
    const shared = {
      RATE_LIMIT_PER_MINUTE: String(limit),
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `e2e-${randomBytes(4).toString('hex')}:`,
    };
    processes.push(await env.spawnApi(shared), await env.spawnApi(shared));
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${processes[i % 2].url}/api/v1/sites`, {
          headers: { Authorization: `Bearer sk_${randomBytes(32).toString('base64url')}` },
        }).then(async (r) => (await r.arrayBuffer(), r.status)),
      ),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - limit);
    const valid = await fetch(`${processes[0].url}/api/v1/sites`, {
      headers: { Authorization: `Bearer ${keyA}` },
    });
    expect(valid.status).toBe(200);
  });

  it('shares one limit between two API processes through Redis', async () => {
    const limit = 20;
    const shared = {
      RATE_LIMIT_PER_MINUTE: String(limit),
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `e2e-${randomBytes(4).toString('hex')}:`,
    };
    processes.push(await env.spawnApi(shared), await env.spawnApi(shared));
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i <= limit; i++) {
      const res = await fetch(`${processes[i % 2].url}/api/v1/sites`, {
        headers: { Authorization: `Bearer ${keyA}` },
      });
      statuses.push(res.status);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(statuses.slice(0, limit)).toEqual(Array(limit).fill(200));
    expect(statuses[limit]).toBe(429);
    expect(remaining.slice(0, limit)).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
    // The key's own window in Redis, under the configured prefix: the key itself is not in it.
    const { default: Redis } = await import('ioredis');
    const redis = new Redis(shared.REDIS_URL);
    try {
      const keys = await redis.keys(`${shared.REDIS_KEY_PREFIX}*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.join(' ')).not.toContain(keyA.slice(3));
      if (keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });

  it('fails open to per-process counting with one warning when Redis is configured but down', async () => {
    const api = await env.spawnApi({
      RATE_LIMIT_PER_MINUTE: '3',
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    });
    processes.push(api);
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await fetch(`${api.url}/api/v1/sites`, { headers: { Authorization: `Bearer ${keyA}` } })).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const warnings = api.stdout.filter((l) => l.includes('Redis unavailable'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0])).toMatchObject({ level: 'warn', context: 'RateLimit' });
    const ready = await fetch(`${api.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'degraded',
      details: { redis: { status: 'degraded' }, database: { status: 'up' } },
    });
  });
});
