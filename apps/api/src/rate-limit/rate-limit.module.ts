import { AppConfig } from '@app/config';
import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import Redis from 'ioredis';
import { AUTH_FAILURES } from '@app/auth';
import { AuthFailureCounter, RateLimitMiddleware } from './rate-limit.middleware';
import { MemoryRateLimitStore, RateLimitStore, RedisRateLimitStore } from './rate-limit.store';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export function createRateLimitStore(config: AppConfig): RateLimitStore {
  if (!config.redis.url) return new MemoryRateLimitStore();
  const redis = new Redis(config.redis.url, {
    // Never queue or retry a command: a request must not wait on Redis; the store falls back.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 250,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2000),
  });
  return new RedisRateLimitStore(redis, `${config.redis.keyPrefix}rl:`);
}

/**
 * @nestjs/throttler's module carries the options (RATE_LIMIT_PER_MINUTE per minute) and the
 * storage (in memory, or Redis when REDIS_URL is set); RateLimitMiddleware applies them.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        throttlers: [{ name: 'default', ttl: RATE_LIMIT_WINDOW_MS, limit: config.limits.rateLimitPerMinute }],
        storage: createRateLimitStore(config),
      }),
    }),
  ],
  providers: [RateLimitMiddleware, { provide: AUTH_FAILURES, useClass: AuthFailureCounter }],
  exports: [RateLimitMiddleware, AUTH_FAILURES],
})
export class RateLimitModule {}
