import { ApiKeyGuard, AuthModule } from '@app/auth';
import { ApiValidationPipe, CsvInterceptor, MethodNotAllowedMiddleware, ProblemFilter } from '@app/common';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/db';
import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, RouterModule } from '@nestjs/core';
import { API_PREFIX, API_ROUTES, API_V1_MODULES } from './api-v1.routes';
import { DatabaseAvailableMiddleware } from './health/database-available.middleware';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { LoggingModule } from './observability/logging.module';
import { RateLimitMiddleware } from './rate-limit/rate-limit.middleware';
import { RateLimitModule } from './rate-limit/rate-limit.module';

/**
 * Every global piece (guard, pipe, filter, interceptor, middleware) is registered here, not in main.ts,
 * so that a test building this module behaves exactly like production. What must run before
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
    ...API_V1_MODULES,
    RouterModule.register(API_ROUTES),
  ],
  providers: [
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_FILTER, useClass: ProblemFilter },
    { provide: APP_INTERCEPTOR, useClass: CsvInterceptor },
  ],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // In this order: every /api/v1 response is metered and carries RateLimit-* (also 405s
    // and 404s), then non-GET methods get 405, then an unavailable database gets 503 at once.
    consumer
      .apply(RateLimitMiddleware, MethodNotAllowedMiddleware, DatabaseAvailableMiddleware)
      .forRoutes(
        { path: `${API_PREFIX}/{*path}`, method: RequestMethod.ALL },
        { path: API_PREFIX, method: RequestMethod.ALL },
      );
  }
}
