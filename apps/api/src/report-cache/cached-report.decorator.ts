import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiHeader, ApiResponse } from '@nestjs/swagger';
import { ReportCacheInterceptor } from './report-cache.interceptor';

/**
 * A report whose answers are cached until the site's data changes, with a strong ETag and
 * `Cache-Control: private, max-age=0, must-revalidate`; `If-None-Match` with the current ETag
 * is answered 304 without a body.
 */
export function CachedReport(): MethodDecorator {
  return applyDecorators(
    UseInterceptors(ReportCacheInterceptor),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'The ETag of an earlier answer: 304 without a body while the answer would be the same.',
      example: '"Lk3q0dXw9kGv2mKp1yZtQ8rN5sB7cE4a"',
    }),
    ApiResponse({
      status: 304,
      description:
        'Not Modified: the answer is the one the If-None-Match ETag names (the site’s data has not changed).',
    }),
  );
}
