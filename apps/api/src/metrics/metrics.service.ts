import { DatabaseMonitor, ReplicaSet, ReplicaState } from '@app/db';
import { ReportDb } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { getHeapStatistics } from 'node:v8';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { ReportConcurrency } from '../concurrency/report-concurrency';
import { ReportCache } from '../report-cache/report-cache.service';

const REPLICA_STATES: readonly ReplicaState[] = ['up', 'lagging', 'down'];

/** The parts of mysql2's pool that tell how busy it is (not in its public typings). */
interface PoolInternals {
  config?: { connectionLimit?: number };
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

/**
 * Prometheus metrics of this process: requests by route and status, their latency, the
 * database pool, whether the database answers, and how far aggregation lags behind imports.
 * Each process has its own registry, so tests can build several apps side by side.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(
    @InjectDataSource() ds: DataSource,
    monitor: DatabaseMonitor,
    reports: ReportDb,
    replicas: ReplicaSet,
    reportCache: ReportCache,
    moduleRef: ModuleRef,
  ) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'report_statements',
      help: "Report statements holding one of the process's report connections (the pool less two), waiting for one, and the most at once",
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        // AppModule's provider (GLOBAL_ENHANCERS), outside this module.
        const permits = moduleRef.get(ReportConcurrency, { strict: false }).statementPermits;
        this.set({ state: 'running' }, permits.held);
        this.set({ state: 'waiting' }, permits.waiting);
        this.set({ state: 'max' }, permits.max);
      },
    });
    new Gauge({
      name: 'nodejs_heap_size_limit_bytes',
      help: "V8's heap size limit: set by --max-old-space-size (npm start's), else from the host's memory",
      registers: [this.registry],
      collect() {
        this.set(getHeapStatistics().heap_size_limit);
      },
    });
    // With replicas, TypeORM keeps the primary's pool in a pool cluster, under MASTER.
    const driver = ds.driver as {
      pool?: PoolInternals;
      poolCluster?: { _nodes?: Record<string, { pool: PoolInternals } | undefined> };
    };
    const pool = () => driver.pool ?? driver.poolCluster?._nodes?.MASTER?.pool;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections of the database pool: open, idle, in use, the pool size, and requests waiting for one',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = pool();
        const open = p?._allConnections?.length ?? 0;
        const idle = p?._freeConnections?.length ?? 0;
        this.set({ state: 'open' }, open);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'in_use' }, open - idle);
        this.set({ state: 'max' }, p?.config?.connectionLimit ?? 0);
        this.set({ state: 'waiting' }, p?._connectionQueue?.length ?? 0);
      },
    });
    new Gauge({
      name: 'db_available',
      help: '1 when the database answered the last health ping, else 0',
      registers: [this.registry],
      collect() {
        this.set(monitor.isAvailable ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_replica_state',
      help: 'State of each read replica: 1 for its current state (up: read from; lagging: further behind than REPLICA_MAX_LAG_SECONDS; down: does not answer)',
      labelNames: ['replica', 'state'] as const,
      registers: [this.registry],
      collect() {
        for (const r of replicas.status())
          for (const state of REPLICA_STATES)
            this.set({ replica: r.replica, state }, r.state === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far each read replica is behind the primary (GTID positions); absent while unknown',
      labelNames: ['replica'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const r of replicas.status())
          if (r.lagSeconds !== null) this.set({ replica: r.replica }, r.lagSeconds);
      },
    });
    new Counter({
      name: 'db_reads_total',
      help: 'Report and lookup reads by the server that answered them: primary, or a replica (host:port); only with read replicas',
      labelNames: ['server'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [server, count] of replicas.readCounts()) this.inc({ server }, count);
      },
    });
    new Counter({
      name: 'report_cache_requests_total',
      help: 'Cached-report lookups: hit (answered from the cache, possibly written by another process) or miss (computed)',
      labelNames: ['result'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const { hits, misses } = reportCache.counts();
        this.inc({ result: 'hit' }, hits);
        this.inc({ result: 'miss' }, misses);
      },
    });
    // Both aggregation gauges read one query per scrape.
    let queue:
      { at: number; state: Promise<{ queued: number; oldest: Date | null } | undefined> } | undefined;
    const queueState = () => {
      if (!queue || Date.now() - queue.at > 500) {
        queue = {
          at: Date.now(),
          state: monitor.isAvailable
            ? reports
                .select<{ queued: number | string; oldest: Date | null }>(
                  'SELECT COUNT(*) AS queued, MIN(marked_at) AS oldest FROM dirty_sessions',
                )
                .then(([row]) => ({ queued: Number(row?.queued ?? 0), oldest: row?.oldest ?? null }))
                // A scrape must not fail because the database did: db_available tells that story.
                .catch(() => undefined)
            : Promise.resolve(undefined),
        };
        void queue.state.finally(() => (queue = undefined));
      }
      return queue.state;
    };
    new Gauge({
      name: 'aggregation_queue_sessions',
      help: 'Sessions with imported hits that `aggregate` has not derived yet',
      registers: [this.registry],
      async collect() {
        const state = await queueState();
        if (state) this.set(state.queued);
      },
    });
    new Gauge({
      name: 'aggregation_lag_seconds',
      help: 'Age of the oldest imported hit batch waiting for `aggregate` (0 when caught up)',
      registers: [this.registry],
      async collect() {
        const state = await queueState();
        if (state)
          this.set(state.oldest ? Math.max(0, (Date.now() - new Date(state.oldest).getTime()) / 1000) : 0);
      },
    });
  }
}
