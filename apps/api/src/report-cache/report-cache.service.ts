import { AppConfig } from '@app/config';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { MemoryReportCacheStore, RedisReportCacheStore, ReportCacheStore } from './report-cache.store';

const MAX_REDIS_ENTRY_BYTES = 8 * 1024 * 1024;

/** The report cache of this process: Redis when REDIS_URL is set, else bounded memory; off at 0 MB. */
@Injectable()
export class ReportCache implements OnApplicationShutdown {
  private readonly store: ReportCacheStore | undefined;
  private hits = 0;
  private misses = 0;

  constructor(config: AppConfig) {
    const { maxBytes, ttlMs } = config.reportCache;
    if (maxBytes === 0) return;
    if (config.redis.url) {
      const redis = new Redis(config.redis.url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 1000,
        commandTimeout: 250,
        retryStrategy: (attempt) => Math.min(attempt * 250, 2000),
      });
      this.store = new RedisReportCacheStore(
        redis,
        `${config.redis.keyPrefix}rc:`,
        ttlMs,
        MAX_REDIS_ENTRY_BYTES,
      );
    } else {
      this.store = new MemoryReportCacheStore(maxBytes, ttlMs);
    }
  }

  /** The cached answer's JSON text. */
  async get(key: string): Promise<string | undefined> {
    const value = this.store ? await this.store.get(key) : undefined;
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }

  /** Lookups answered from the cache and lookups that were not, since the process started. */
  counts(): { hits: number; misses: number } {
    return { hits: this.hits, misses: this.misses };
  }

  set(key: string, json: string): Promise<void> {
    return this.store ? this.store.set(key, json) : Promise.resolve();
  }

  onApplicationShutdown(): void {
    if (this.store instanceof RedisReportCacheStore) this.store.onApplicationShutdown();
  }
}
