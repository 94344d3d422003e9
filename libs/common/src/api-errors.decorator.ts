import { applyDecorators } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ProblemDetailsDto } from './problem.dto';

/** The error responses every /api/v1 route can give, documented once. */
export const ApiStandardErrors = () =>
  applyDecorators(
    ApiBadRequestResponse({
      description: 'Invalid parameters; `errors[]` names each one',
      type: ProblemDetailsDto,
    }),
    ApiUnauthorizedResponse({
      description: 'Missing, malformed, unknown, revoked or expired API key',
      type: ProblemDetailsDto,
    }),
    ApiResponse({ status: 405, description: 'Only GET and HEAD are allowed', type: ProblemDetailsDto }),
    ApiResponse({
      status: 429,
      description: 'Rate limit exceeded; see Retry-After',
      type: ProblemDetailsDto,
    }),
    ApiServiceUnavailableResponse({
      description: 'Database unavailable or query over its time budget; see Retry-After',
      type: ProblemDetailsDto,
    }),
  );
