import { HttpException, HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';

export interface ParameterError {
  parameter: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: ParameterError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problem(status: number, detail: string, extra: Partial<ProblemBody> = {}): ProblemBody {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...extra };
}

/** A 400 naming each offending parameter; thrown by pipes and parameter parsers. */
export class InvalidParametersException extends HttpException {
  constructor(readonly errors: ParameterError[]) {
    super(
      problem(HttpStatus.BAD_REQUEST, errors.map((e) => e.message).join('; ') || 'Invalid parameters.', {
        errors,
      }),
      HttpStatus.BAD_REQUEST,
    );
  }

  static of(parameter: string, message: string): InvalidParametersException {
    return new InvalidParametersException([{ parameter, message }]);
  }
}

/** The database is unreachable or a query ran over its time budget: the client may retry. */
export class ServiceUnavailableProblem extends HttpException {
  constructor(
    detail: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(problem(HttpStatus.SERVICE_UNAVAILABLE, detail), HttpStatus.SERVICE_UNAVAILABLE);
  }
}

/**
 * A 429 raised inside the Nest pipeline (a guard or an interceptor), with the seconds to wait
 * in `Retry-After` and any other headers the answer must carry (RateLimit-*).
 */
export class TooManyRequestsProblem extends HttpException {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
    readonly headers: Record<string, string> = {},
    extra: Partial<ProblemBody> = {},
  ) {
    super(problem(HttpStatus.TOO_MANY_REQUESTS, detail, extra), HttpStatus.TOO_MANY_REQUESTS);
  }
}
