import { Logger, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';

/**
 * Cached report bodies by key, as the JSON text that is sent: a hit is answered without parsing
 * and serialising the report again. Misses and store faults look alike: the report is computed.
 */
export interface ReportCacheStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, json: string): Promise<void>;
}

/** One process's cache, bounded by the JSON size of what it holds; least recently used goes first. */
export class MemoryReportCacheStore implements ReportCacheStore {
  private readonly entries: LRUCache<string, string>;

  constructor(maxBytes: number, ttlMs: number) {
    this.entries = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (json) => json.length || 1,
      ttl: ttlMs,
    });
  }

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.entries.get(key));
  }

  set(key: string, json: string): Promise<void> {
    this.entries.set(key, json);
    return Promise.resolve();
  }
}

/**
 * Shared by every API process through Redis (REDIS_URL). Entries expire after the TTL; a
 * new data version makes old ones unreachable before that. Redis trouble never fails a
 * request: the report is computed instead.
 */
export class RedisReportCacheStore implements ReportCacheStore, OnApplicationShutdown {
  private readonly logger = new Logger(RedisReportCacheStore.name);

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly maxEntryBytes: number,
  ) {
    redis.on('error', (e: Error) => this.logger.debug(`report cache: ${e.message}`));
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.redis.get(this.prefix + key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, json: string): Promise<void> {
    if (json.length > this.maxEntryBytes) return;
    try {
      await this.redis.set(this.prefix + key, json, 'PX', this.ttlMs);
    } catch {
      // A cache that cannot store is a cache that misses.
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
