import { Public } from '@app/auth';
import { problem } from '@app/common';
import { AppConfig } from '@app/config';
import { DatabaseMonitor } from '@app/db';
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
   * timeout. Redis, when configured, is reported but never fails readiness: rate limits
   * then fall back to per-process counters.
   */
  @Get('ready')
  @HealthCheck()
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () =>
          this.indicators
            .check('database')
            .attempt(async () => {
              if (!(await this.db.check())) throw new Error(this.db.status().error ?? 'unavailable');
            })
            .withTimeout(this.config.dbConnectTimeoutMs * 2),
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
        ...problem(HttpStatus.SERVICE_UNAVAILABLE, 'Not ready: the database does not answer.'),
        checks: result.details,
      });
    }
  }
}
