import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import type Redis from 'ioredis';

export interface RateLimitRecord {
  totalHits: number;
  /** Seconds until the window ends and the count starts again. */
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

export interface WindowState {
  totalHits: number;
  timeToExpire: number;
}

/**
 * @nestjs/throttler's storage contract, with a fixed window: the first hit opens a window of
 * `ttl` ms, every hit in it counts, a hit past `limit` is blocked until the window ends. The
 * same arithmetic runs in memory and in Redis, so one process and a fleet behave alike.
 */
export interface RateLimitStore extends ThrottlerStorage {
  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<RateLimitRecord>;
  /** The current window of `key` without counting a hit. */
  peek(key: string): Promise<WindowState>;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function record(hits: number, remainingMs: number, limit: number): RateLimitRecord {
  const isBlocked = hits > limit;
  return {
    totalHits: hits,
    timeToExpire: seconds(remainingMs),
    isBlocked,
    timeToBlockExpire: isBlocked ? seconds(remainingMs) : 0,
  };
}

/** Counters of one process; expired windows are swept every minute. */
export class MemoryRateLimitStore implements RateLimitStore, OnApplicationShutdown {
  private readonly windows = new Map<string, { hits: number; endsAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  increment(key: string, ttl: number, limit: number): Promise<RateLimitRecord> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + ttl };
      this.windows.set(key, window);
    }
    window.hits++;
    return Promise.resolve(record(window.hits, window.endsAt - now, limit));
  }

  peek(key: string): Promise<WindowState> {
    const now = Date.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return Promise.resolve({ totalHits: 0, timeToExpire: 0 });
    return Promise.resolve({ totalHits: window.hits, timeToExpire: seconds(window.endsAt - now) });
  }

  sweep(now = Date.now()): void {
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }
}

/** INCR and the window's expiry in one atomic step; the expiry is set by the window's first hit. */
export const INCREMENT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { hits, ttl }`;

const PEEK_SCRIPT = `
local hits = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
return { hits, ttl }`;

interface ScriptedRedis extends Redis {
  rateLimitIncrement(key: string, ttl: number): Promise<[number, number]>;
  rateLimitPeek(key: string): Promise<[number, number]>;
}

/** After a failed Redis call, stay on local counters this long before trying Redis again. */
const REDIS_RETRY_AFTER_MS = 5_000;

/**
 * Counters shared by every API process through Redis. When Redis does not answer, it fails
 * open to per-process counters (a read API should keep serving; each process then enforces
 * the limit on its own) and logs it once; it goes back to Redis by itself.
 */
export class RedisRateLimitStore implements RateLimitStore, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: ScriptedRedis;
  private degradedUntil = 0;
  private degraded = false;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly fallback = new MemoryRateLimitStore(),
  ) {
    redis.defineCommand('rateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
    redis.defineCommand('rateLimitPeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
    // ioredis reconnects by itself; without a listener its connection errors would be thrown.
    redis.on('error', (e: Error) => this.degrade(e));
    this.redis = redis as ScriptedRedis;
  }

  async increment(key: string, ttl: number, limit: number): Promise<RateLimitRecord> {
    if (this.usable()) {
      try {
        const [hits, remaining] = await this.redis.rateLimitIncrement(this.prefix + key, ttl);
        this.recover();
        return record(Number(hits), Number(remaining), limit);
      } catch (e) {
        this.degrade(e);
      }
    }
    return this.fallback.increment(key, ttl, limit);
  }

  async peek(key: string): Promise<WindowState> {
    if (this.usable()) {
      try {
        const [hits, remaining] = await this.redis.rateLimitPeek(this.prefix + key);
        this.recover();
        return {
          totalHits: Number(hits),
          timeToExpire: Number(remaining) > 0 ? seconds(Number(remaining)) : 0,
        };
      } catch (e) {
        this.degrade(e);
      }
    }
    return this.fallback.peek(key);
  }

  /** Whether counts are shared right now (false while failing open). */
  get shared(): boolean {
    return this.usable();
  }

  onApplicationShutdown(): void {
    this.fallback.onApplicationShutdown();
    this.redis.disconnect();
  }

  private usable(): boolean {
    return this.redis.status === 'ready' && Date.now() >= this.degradedUntil;
  }

  private degrade(error: unknown): void {
    this.degradedUntil = Date.now() + REDIS_RETRY_AFTER_MS;
    if (this.degraded) return;
    this.degraded = true;
    const reason = (error as { code?: string; message?: string })?.code ?? (error as Error)?.message;
    this.logger.warn(
      `Redis unavailable (${reason}): rate limits are counted per process until it answers again`,
    );
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.log('Redis available again: rate limits are shared');
  }
}
