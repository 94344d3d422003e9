import { ApiKeyGuard, AuthModule } from '@app/auth';
import { ApiValidationPipe, MethodNotAllowedMiddleware, ProblemFilter } from '@app/common';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/db';
import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, RouterModule } from '@nestjs/core';
import { API_PREFIX, API_ROUTES, API_V1_MODULES } from './api-v1.routes';

/**
 * Every global piece (guard, pipe, filter, middleware) is registered here, not in main.ts,
 * so that a test building this module behaves exactly like production.
 */
@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('api'),
    AuthModule,
    ...API_V1_MODULES,
    RouterModule.register(API_ROUTES),
  ],
  providers: [
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_PIPE, useClass: ApiValidationPipe },
    { provide: APP_FILTER, useClass: ProblemFilter },
  ],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(MethodNotAllowedMiddleware)
      .forRoutes(
        { path: `${API_PREFIX}/{*path}`, method: RequestMethod.ALL },
        { path: API_PREFIX, method: RequestMethod.ALL },
      );
  }
}
