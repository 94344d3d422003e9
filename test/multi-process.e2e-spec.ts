import { randomBytes } from 'node:crypto';
import { pageview } from './support/hits';
import { ApiProcess, TestEnv } from './support/test-env';

const RANGE = 'from=2026-03-10&to=2026-03-11';
const LIMIT = 12;

/** Two real API processes, each on its own port, sharing one Redis: as behind a load balancer. */
describe('Several API processes on one Redis', () => {
  let env: TestEnv;
  let site: number;
  let cacheKey: string;
  let limitKey: string;
  let a: ApiProcess;
  let b: ApiProcess;
  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `e2e-mp-${randomBytes(4).toString('hex')}:`;

  const get = (api: ApiProcess, path: string, key: string, headers: Record<string, string> = {}) =>
    fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  const cacheCounts = async (api: ApiProcess) => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const count = (result: string) =>
      Number(new RegExp(`^report_cache_requests_total\\{result="${result}"\\} (\\d+)`, 'm').exec(text)?.[1]);
    return { hit: count('hit'), miss: count('miss') };
  };

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    cacheKey = (await env.key(user)).key;
    limitKey = (await env.key(user)).key;
    await env.importHits([
      pageview(site, 'A', '2026-03-10T05:00:00Z', '/home'),
      pageview(site, 'B', '2026-03-11T06:00:00Z', '/pricing'),
    ]);
    await env.aggregate();
    const shared = { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: String(LIMIT) };
    [a, b] = await Promise.all([env.spawnApi(shared), env.spawnApi(shared)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop('SIGKILL'), b?.stop('SIGKILL')]);
    const { default: Redis } = await import('ioredis');
    const redis = new Redis(redisUrl);
    try {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    await env.close();
  });

  it('give the same body and ETag for the same request, the second process answering from the entry the first wrote', async () => {
    const path = `/api/v1/sites/${site}/analytics/overview?${RANGE}`;
    const [beforeA, beforeB] = [await cacheCounts(a), await cacheCounts(b)];
    const first = await get(a, path, cacheKey);
    const second = await get(b, path, cacheKey);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await second.text()).toBe(await first.text());
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(first.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    // A computed it (a miss), B found A's entry in Redis (a hit).
    expect(await cacheCounts(a)).toEqual({ hit: beforeA.hit, miss: beforeA.miss + 1 });
    expect(await cacheCounts(b)).toEqual({ hit: beforeB.hit + 1, miss: beforeB.miss });

    // Either process answers If-None-Match with the other's ETag.
    // (fetch adds Cache-Control: no-cache to a conditional request unless one is given, and
    // Express never answers 304 to no-cache: a browser revalidating sends max-age=0.)
    const revalidated = await get(a, path, cacheKey, {
      'If-None-Match': second.headers.get('etag')!,
      'Cache-Control': 'max-age=0',
    });
    expect(revalidated.status).toBe(304);
  });

  it('share one rate limit: the request over it is refused by whichever process gets it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++)
      statuses.push((await get(i % 2 ? b : a, '/api/v1/sites', limitKey)).status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429]);
    expect((await get(a, '/api/v1/sites', limitKey)).status).toBe(429);
  });
});
