import type { NextFunction, Request, Response } from 'express';
import { EventEmitter } from 'node:events';
import { TooManyRequestsProblem } from '@app/common';
import { addressBucket, AuthFailureCounter, keyBucket, RateLimitMiddleware } from './rate-limit.middleware';
import { MemoryRateLimitStore } from './rate-limit.store';

const KEY = `sk_${'a'.repeat(43)}`;

function exchange(authorization?: string, ip = '203.0.113.7') {
  const req = {
    ip,
    path: '/api/v1/sites',
    headers: authorization ? { authorization } : {},
  } as unknown as Request;
  const headers: Record<string, string> = {};
  const res = Object.assign(new EventEmitter(), {
    statusCode: 200,
    headers,
    body: undefined as string | undefined,
    setHeader(name: string, value: string) {
      this.headers[name] = value;
      return this;
    },
    status(code: number) {
      this.statusCode = code;
      return this;
    },
    type() {
      return this;
    },
    send(body: string) {
      this.body = body;
      return this;
    },
    end(body: string) {
      this.body = body;
      return this;
    },
    removeHeader(name: string) {
      delete this.headers[name];
      return this;
    },
  });
  const next = jest.fn() as unknown as NextFunction & jest.Mock;
  return { req, res, next };
}

describe(RateLimitMiddleware.name, () => {
  let store: MemoryRateLimitStore;
  let sut: RateLimitMiddleware;

  beforeEach(() => {
    store = new MemoryRateLimitStore();
    sut = new RateLimitMiddleware({ throttlers: [{ name: 'default', limit: 2, ttl: 60_000 }] }, store);
  });

  afterEach(() => store.onApplicationShutdown());

  const run = async (authorization?: string, ip?: string) => {
    const x = exchange(authorization, ip);
    await sut.use(x.req, x.res as unknown as Response, x.next);
    return x;
  };

  it('lets requests through with RateLimit-* headers until the limit, then answers 429', async () => {
    const first = await run(`Bearer ${KEY}`);
    expect(first.next).toHaveBeenCalled();
    expect(first.res.headers).toMatchObject({
      'RateLimit-Limit': '2',
      'RateLimit-Remaining': '1',
      'RateLimit-Reset': '60',
      'RateLimit-Policy': '2;w=60',
    });
    await run(`Bearer ${KEY}`);
    const third = await run(`Bearer ${KEY}`);
    expect(third.next).not.toHaveBeenCalled();
    expect(third.res.statusCode).toBe(429);
    expect(third.res.headers['Retry-After']).toBe('60');
    expect(JSON.parse(third.res.body!)).toMatchObject({ status: 429, title: 'Too Many Requests' });
  });

  it('counts a key wherever it comes from, and an address only without a key', async () => {
    await run(`Bearer ${KEY}`, '198.51.100.1');
    await run(`Bearer ${KEY}`, '198.51.100.2');
    expect((await store.peek(keyBucket(KEY))).totalHits).toBe(2);
    expect((await store.peek(addressBucket('198.51.100.1'))).totalHits).toBe(0);
    await run(undefined, '198.51.100.1');
    await run('Bearer not-a-key', '198.51.100.1');
    expect((await store.peek(addressBucket('198.51.100.1'))).totalHits).toBe(2);
  });

  it("charges refused keys to their address atomically, never a valid key's requests", async () => {
    const failures = new AuthFailureCounter(sut);
    const from = exchange(`Bearer sk_${'b'.repeat(43)}`).req;
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => failures.record(from)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
    const refused = (outcomes[2] as PromiseRejectedResult).reason as TooManyRequestsProblem;
    expect(refused).toBeInstanceOf(TooManyRequestsProblem);
    expect(refused.getStatus()).toBe(429);
    expect(refused.retryAfterSeconds).toBe(60);
    expect(refused.headers['RateLimit-Remaining']).toBe('0');
    expect((await store.peek(addressBucket('203.0.113.7'))).totalHits).toBe(4);

    const valid = await run(`Bearer ${KEY}`);
    expect(valid.next).toHaveBeenCalled();
    expect((await store.peek(keyBucket(KEY))).totalHits).toBe(1);
    expect((await store.peek(addressBucket('203.0.113.7'))).totalHits).toBe(4);
  });

  it('never puts the key itself in a bucket name', () => {
    expect(keyBucket(KEY)).not.toContain(KEY.slice(3, 20));
    expect(keyBucket(KEY)).toMatch(/^k:[A-Za-z0-9_-]{32}$/);
  });
});
