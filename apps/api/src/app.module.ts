import { AuthModule } from '@app/auth';
import { HostRequiredMiddleware, MethodNotAllowedMiddleware, reportCacheControl } from '@app/common';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/db';
import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { API_PREFIX, API_ROUTES, API_V1_MODULES } from './api-v1.routes';
import { GLOBAL_ENHANCERS } from './global-enhancers';
import { DatabaseAvailableMiddleware } from './health/database-available.middleware';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { LoggingModule } from './observability/logging.module';
import { RateLimitMiddleware } from './rate-limit/rate-limit.middleware';
import { RateLimitModule } from './rate-limit/rate-limit.module';
import { ReportCacheModule } from './report-cache/report-cache.module';

/**
 * Every global piece (guard, pipe, filter, interceptor, middleware) is registered here, not in main.ts,
 * so that a test building this module behaves exactly like production; the controller specs
 * register the same GLOBAL_ENHANCERS. What must run before
 * Express matches a route (request id, request-target checks, security headers) is in
 * configureApp().
 */
@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    DatabaseModule.forRoot('api'),
    AuthModule,
    RateLimitModule,
    HealthModule,
    MetricsModule,
    ReportCacheModule,
    ...API_V1_MODULES,
    RouterModule.register(API_ROUTES),
  ],
  providers: GLOBAL_ENHANCERS,
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // In this order: every /api/v1 response carries Cache-Control, is metered and carries
    // RateLimit-* (also 405s and 404s), then a request without Host gets 400, non-GET methods
    // get 405, then an unavailable database gets 503 at once.
    consumer
      .apply(
        reportCacheControl,
        RateLimitMiddleware,
        HostRequiredMiddleware,
        MethodNotAllowedMiddleware,
        DatabaseAvailableMiddleware,
      )
      .forRoutes(
        { path: `${API_PREFIX}/{*path}`, method: RequestMethod.ALL },
        { path: API_PREFIX, method: RequestMethod.ALL },
      );
    // Everything else (health, docs, metrics, unknown paths): the same 400, without RateLimit-*.
    consumer.apply(HostRequiredMiddleware).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
