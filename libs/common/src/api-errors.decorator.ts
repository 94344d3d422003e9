import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { PROBLEM_CONTENT_TYPE } from './problem';
import { ProblemDetailsDto } from './problem.dto';

const EXAMPLES: Record<number, { detail: string; errors?: Array<{ parameter: string; message: string }> }> = {
  400: {
    detail: 'window_hours must be at most 168',
    errors: [{ parameter: 'window_hours', message: 'window_hours must be at most 168' }],
  },
  401: { detail: 'The API key is not valid.' },
  403: { detail: 'This key cannot read site 2.' },
  404: { detail: 'No site with id 999.' },
  405: { detail: 'POST is not allowed: this API is read-only.' },
  406: { detail: 'This resource has no CSV form; ask for application/json.' },
  429: { detail: 'Rate limit of 600 requests per minute exceeded for this key.' },
  503: { detail: 'The database is unavailable. Retry later.' },
};

/** One documented error response: an RFC 9457 body as `application/problem+json`, with an example. */
export function ApiProblemResponse(status: number, description: string): MethodDecorator & ClassDecorator {
  const example = EXAMPLES[status] ?? { detail: description };
  return applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ApiResponse({
      status,
      description,
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: { $ref: getSchemaPath(ProblemDetailsDto) },
          example: { type: 'about:blank', title: STATUS_CODES[status], status, ...example },
        },
      },
    }),
  );
}

/** The error responses every /api/v1 route can give, documented once. */
export const ApiStandardErrors = () =>
  applyDecorators(
    ApiProblemResponse(400, 'Invalid parameters; `errors[]` names each one'),
    ApiProblemResponse(
      401,
      'Missing, malformed, unknown, revoked or expired API key (with `WWW-Authenticate: Bearer`)',
    ),
    ApiProblemResponse(405, 'Only GET and HEAD are allowed (with `Allow: GET, HEAD`)'),
    ApiProblemResponse(429, 'Rate limit exceeded; retry after `Retry-After` seconds'),
    ApiProblemResponse(
      503,
      'Database unavailable or query over its time budget; retry after `Retry-After` seconds',
    ),
  );
