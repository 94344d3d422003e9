import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { MemoryRateLimitStore, RedisRateLimitStore } from './rate-limit.store';

describe(MemoryRateLimitStore.name, () => {
  let sut: MemoryRateLimitStore;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    sut = new MemoryRateLimitStore();
  });

  afterEach(() => {
    sut.onApplicationShutdown();
    jest.useRealTimers();
  });

  it('counts hits in a fixed window opened by the first one and blocks past the limit', async () => {
    expect(await sut.increment('k', 60_000, 2)).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    jest.advanceTimersByTime(20_000);
    expect(await sut.increment('k', 60_000, 2)).toMatchObject({
      totalHits: 2,
      timeToExpire: 40,
      isBlocked: false,
    });
    expect(await sut.increment('k', 60_000, 2)).toEqual({
      totalHits: 3,
      timeToExpire: 40,
      isBlocked: true,
      timeToBlockExpire: 40,
    });
  });

  it('starts a new window once the old one ended', async () => {
    for (let i = 0; i < 3; i++) await sut.increment('k', 60_000, 2);
    jest.advanceTimersByTime(60_000);
    expect(await sut.increment('k', 60_000, 2)).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('keeps keys apart and peeks without counting', async () => {
    await sut.increment('a', 60_000, 5);
    await sut.increment('a', 60_000, 5);
    expect(await sut.peek('a')).toEqual({ totalHits: 2, timeToExpire: 60 });
    expect(await sut.peek('a')).toEqual({ totalHits: 2, timeToExpire: 60 });
    expect(await sut.peek('b')).toEqual({ totalHits: 0, timeToExpire: 0 });
  });

  it('sweeps ended windows so that memory does not grow with every address ever seen', async () => {
    for (let i = 0; i < 100; i++) await sut.increment(`ip:${i}`, 60_000, 5);
    expect(sut.size).toBe(100);
    jest.advanceTimersByTime(60_001);
    sut.sweep();
    expect(sut.size).toBe(0);
  });
});

describe(RedisRateLimitStore.name, () => {
  function fakeRedis(overrides: Partial<Record<string, unknown>> = {}) {
    const handlers: Record<string, (e: Error) => void> = {};
    const redis = {
      status: 'ready',
      defineCommand: jest.fn(),
      on: jest.fn((event: string, handler: (e: Error) => void) => (handlers[event] = handler)),
      disconnect: jest.fn(),
      rateLimitIncrement: jest.fn().mockResolvedValue([1, 60_000]),
      rateLimitPeek: jest.fn().mockResolvedValue([0, -2]),
      ...overrides,
    };
    return { redis, handlers };
  }

  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('counts in Redis under the prefix, with the window in milliseconds', async () => {
    const { redis } = fakeRedis({ rateLimitIncrement: jest.fn().mockResolvedValue([3, 42_500]) });
    const sut = new RedisRateLimitStore(redis as unknown as Redis, 'p:rl:');
    expect(await sut.increment('k:abc', 60_000, 2)).toEqual({
      totalHits: 3,
      timeToExpire: 43,
      isBlocked: true,
      timeToBlockExpire: 43,
    });
    expect(redis.rateLimitIncrement).toHaveBeenCalledWith('p:rl:k:abc', 60_000);
    expect(redis.defineCommand).toHaveBeenCalledWith(
      'rateLimitIncrement',
      expect.objectContaining({ numberOfKeys: 1 }),
    );
  });

  it('fails open to per-process counting, warns once, and goes back to Redis when it answers', async () => {
    const failing = jest.fn().mockRejectedValue(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
    const { redis } = fakeRedis({ rateLimitIncrement: failing });
    const sut = new RedisRateLimitStore(redis as unknown as Redis, 'p:');
    expect(await sut.increment('k', 60_000, 1)).toMatchObject({ totalHits: 1, isBlocked: false });
    // Within the back-off Redis is not asked again; the local counter carries on.
    expect(await sut.increment('k', 60_000, 1)).toMatchObject({ totalHits: 2, isBlocked: true });
    expect(failing).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/Redis unavailable \(ETIMEDOUT\)/);
    expect(sut.shared).toBe(false);
  });

  it('uses the local counters at once while the connection is not ready', async () => {
    const { redis, handlers } = fakeRedis({ status: 'reconnecting' });
    const sut = new RedisRateLimitStore(redis as unknown as Redis, 'p:');
    handlers.error(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(await sut.increment('k', 60_000, 5)).toMatchObject({ totalHits: 1 });
    expect(redis.rateLimitIncrement).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
