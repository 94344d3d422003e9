import { Public } from '@app/auth';
import { problem } from '@app/common';
import { AppConfig } from '@app/config';
import { DatabaseMonitor, ReplicaSet } from '@app/db';
import { Controller, Get, HttpStatus, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckResult, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { InjectThrottlerStorage } from '@nestjs/throttler';
import type { RateLimitStore } from '../rate-limit/rate-limit.store';
import { RedisRateLimitStore } from '../rate-limit/rate-limit.store';

/**
 * Probes for orchestrators and load balancers, outside /api/v1 and without a key. Left out
 * of the OpenAPI document, which describes the API its clients call; docs/operations.md
 * describes these.
 */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly db: DatabaseMonitor,
    private readonly replicas: ReplicaSet,
    private readonly config: AppConfig,
    @InjectThrottlerStorage() private readonly rateLimits: RateLimitStore,
  ) {}

  /** The process is up and its event loop turns; says nothing about the database. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Whether this instance can serve: the database answers a ping now, within the connect
   * timeout. With read replicas, each replica's state and lag is reported under `replicas`,
   * and the instance stays ready while the primary is down as long as one replica may be
   * read (the primary is then `degraded`); replicas that are all down or lagging are
   * `degraded` too, since the primary answers their reads. Redis, when configured, is
   * reported but never fails readiness: rate limits then fall back to per-process counters.
   */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () =>
          this.replicas.configured
            ? this.databaseWithReplicas()
            : this.indicators
                .check('database')
                .attempt(async () => {
                  if (!(await this.db.check())) throw new Error(this.db.status().error ?? 'unavailable');
                })
                .withTimeout(this.config.dbConnectTimeoutMs * 2),
        ...(this.replicas.configured ? [() => this.replicaHealth()] : []),
        () => {
          const redis = this.indicators.check('redis');
          if (!(this.rateLimits instanceof RedisRateLimitStore)) return redis.up({ mode: 'in-memory' });
          return this.rateLimits.shared
            ? redis.up({ mode: 'shared' })
            : redis.degraded({ mode: 'per-process fallback' });
        },
      ]);
    } catch (e) {
      if (!(e instanceof ServiceUnavailableException)) throw e;
      const result = e.getResponse() as HealthCheckResult;
      throw new ServiceUnavailableException({
        ...problem(
          HttpStatus.SERVICE_UNAVAILABLE,
          this.replicas.configured
            ? 'Not ready: no database answers (neither the primary nor a replica).'
            : 'Not ready: the database does not answer.',
        ),
        checks: result.details,
      });
    }
  }

  /** The primary, reported `degraded` rather than `down` while a replica serves the reads. */
  private async databaseWithReplicas() {
    const started = Date.now();
    const [primary] = await Promise.all([this.db.check(), this.replicas.check()]);
    const database = this.indicators.check('database');
    if (primary) return database.up({ responseTime: Date.now() - started });
    const message = this.db.status().error ?? 'unavailable';
    return this.replicas.canServe
      ? database.degraded({ message, reads: 'replicas' })
      : database.down({ message });
  }

  private async replicaHealth() {
    await this.replicas.check();
    const servers = this.replicas.status().map((r) => ({
      replica: r.replica,
      state: r.state,
      lag_seconds: r.lagSeconds,
      since: r.since,
      ...(r.error ? { error: r.error } : {}),
    }));
    const indicator = this.indicators.check('replicas');
    return servers.some((s) => s.state === 'up')
      ? indicator.up({ servers })
      : indicator.degraded({ servers, reads: 'primary' });
  }
}
