import { ApiKeyGuard } from '@app/auth';
import { ApiValidationPipe, CsvInterceptor, ProblemFilter } from '@app/common';
import type { Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { QueryKiller } from './concurrency/query-killer';
import { ReportConcurrency } from './concurrency/report-concurrency';
import { ReportConcurrencyInterceptor } from './concurrency/report-concurrency.interceptor';

/**
 * The global guard, pipe, filter and interceptor. AppModule registers this list, and so do the
 * controller specs, so that a spec booting one controller checks keys and parameters exactly
 * as production does.
 */
export const GLOBAL_ENHANCERS: Provider[] = [
  { provide: APP_GUARD, useClass: ApiKeyGuard },
  { provide: APP_PIPE, useClass: ApiValidationPipe },
  { provide: APP_FILTER, useClass: ProblemFilter },
  // First, so that the concurrency slot spans everything the handler and the CSV writer do.
  { provide: APP_INTERCEPTOR, useClass: ReportConcurrencyInterceptor },
  { provide: APP_INTERCEPTOR, useClass: CsvInterceptor },
  ReportConcurrency,
  QueryKiller,
];
