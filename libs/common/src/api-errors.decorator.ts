import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { PROBLEM_CONTENT_TYPE } from './problem';
import { ProblemDetailsDto } from './problem.dto';

const EXAMPLES: Record<
  number,
  { title?: string; detail: string; errors?: Array<{ parameter: string; message: string }> }
> = {
  400: {
    detail: 'window_hours must be at most 168',
    errors: [{ parameter: 'window_hours', message: 'window_hours must be at most 168' }],
  },
  401: { detail: 'The API key is not valid.' },
  403: { detail: 'This key cannot read site 2.' },
  404: { detail: 'No site with id 999.' },
  405: { detail: 'POST is not allowed: this API is read-only.' },
  406: { detail: 'This resource has no CSV form; ask for application/json.' },
  408: { detail: 'The request was refused before it was read.' },
  414: { detail: 'The request target is 9000 bytes long; the limit is 8192.' },
  429: { detail: 'More than 600 requests in 60 s. Retry after 42 s.' },
  431: { detail: 'The request was refused before it was read.' },
  499: { title: 'Client Closed Request', detail: 'The client closed the connection before the answer.' },
  500: { detail: 'An unexpected error occurred.' },
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
    ApiProblemResponse(
      406,
      'A media type this route cannot produce: `format=csv` or `Accept: text/csv` on a route without a CSV form',
    ),
    ApiProblemResponse(408, 'The request headers did not arrive in time (answered before any route runs)'),
    ApiProblemResponse(414, 'The request target (path and query) is longer than the limit (`MAX_URL_BYTES`)'),
    ApiProblemResponse(
      429,
      'Rate limit exceeded, or too many report requests of this key or site running at once ' +
        '(`detail` says which); retry after `Retry-After` seconds',
    ),
    ApiProblemResponse(431, 'The request headers are larger than 16 KB (answered before any route runs)'),
    ApiProblemResponse(
      499,
      'Client Closed Request: the client went away before the answer and its queries were stopped; ' +
        'logged, and received by nobody',
    ),
    ApiProblemResponse(500, 'An unexpected error (a bug); the body never holds internals'),
    ApiProblemResponse(
      503,
      'Database unavailable or query over its time budget; retry after `Retry-After` seconds. A report ' +
        'over its budget under a `filters` condition on page, entry_page, exit_page or goal says so in ' +
        '`detail`: the same request is likely to run out again, a shorter range is what helps',
    ),
  );
