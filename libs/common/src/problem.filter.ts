import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { ParameterError } from '@app/stats/parameter-error';
import { ClientGoneError } from '@app/stats/report-session';
import type { Request, Response } from 'express';
import { problem, ProblemBody, ServiceUnavailableProblem, TooManyRequestsProblem } from './problem';
import { sendProblem } from './send-problem';
import { isDatabaseUnavailableError } from '@app/db/driver-errors';
import { QueryTimeBudgetError } from '@app/stats/query-time-budget-error';
import { parseFilters } from '@app/stats/query/filters';
import { isSessionAttribute } from '@app/stats/definitions';

const CLIENT_CLOSED_REQUEST = 499;

/**
 * Turns every error into an RFC 9457 body. Unexpected errors are logged here with their stack
 * and answered without one; database faults become 503 so that clients retry.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    if (res.headersSent) return;

    const body = this.toProblem(exception, req);
    body.instance = req.path;
    const headers: Record<string, string> = {};
    if (body.status === Number(HttpStatus.UNAUTHORIZED)) headers['WWW-Authenticate'] = 'Bearer';
    if (body.status === Number(HttpStatus.METHOD_NOT_ALLOWED)) headers.Allow = 'GET, HEAD';
    if (exception instanceof TooManyRequestsProblem) {
      Object.assign(headers, exception.headers);
      headers['Retry-After'] = String(exception.retryAfterSeconds);
    }
    if (body.status === Number(HttpStatus.SERVICE_UNAVAILABLE)) {
      const retry = exception instanceof ServiceUnavailableProblem ? exception.retryAfterSeconds : 5;
      headers['Retry-After'] = String(retry);
    }
    // A CSV download that failed is a problem body, not an attachment.
    res.removeHeader('Content-Disposition');
    sendProblem(res, body, headers);
  }

  private toProblem(exception: unknown, req: Request): ProblemBody {
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      if (isProblem(response)) return { ...response };
      return problem(status, describe(status, response));
    }
    if (exception instanceof ClientGoneError) {
      // Nobody reads this answer; nginx's 499 names the case in the request log.
      this.logger.debug(exception.message);
      return { ...problem(CLIENT_CLOSED_REQUEST, exception.message), title: 'Client Closed Request' };
    }
    if (exception instanceof ParameterError) {
      const errors = [{ parameter: exception.parameter, message: exception.message }];
      return problem(HttpStatus.BAD_REQUEST, exception.message, { errors });
    }
    const clientError = httpErrorStatus(exception);
    if (clientError !== undefined) {
      // Errors raised by Express or Node before Nest's pipeline (http-errors): the client's fault.
      const detail = (exception as Error).message || problem(clientError, '').title;
      return clientError === Number(HttpStatus.BAD_REQUEST)
        ? problem(clientError, detail, { errors: [{ parameter: 'path', message: detail }] })
        : problem(clientError, detail);
    }
    if (exception instanceof QueryTimeBudgetError) {
      this.logger.warn('a query exceeded its time budget');
      return problem(
        HttpStatus.SERVICE_UNAVAILABLE,
        hasPerSessionCondition(req)
          ? 'The report took longer than its time budget. Conditions on page, entry_page, exit_page ' +
              'or goal that select many sessions are slow over long ranges: ask for a shorter range.'
          : 'The report took longer than its time budget. Retry later or ask for a shorter range.',
      );
    }
    if (isDatabaseUnavailableError(exception)) {
      // The DatabaseMonitor logs each outage once; one line per failed request would flood the log.
      this.logger.debug(`database unavailable: ${(exception as Error).message}`);
      return problem(HttpStatus.SERVICE_UNAVAILABLE, 'The database is unavailable. Retry later.');
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    return problem(HttpStatus.INTERNAL_SERVER_ERROR, 'An unexpected error occurred.');
  }
}

/**
 * Whether the request's `filters` hold a condition that is not on a session attribute (`page`,
 * `entry_page`, `exit_page`, `goal`): those are read from each session of the range, not from
 * rollups (docs/decisions/filters.md), so at 10M pageviews a popular page's condition outlasts
 * the time budget however often it is retried (BENCHMARKS.md run BG). Only the wording of that
 * error depends on it, and only that error parses the parameter again.
 */
function hasPerSessionCondition(req: Request): boolean {
  const filters = req.query?.filters;
  if (typeof filters !== 'string') return false;
  try {
    return parseFilters(filters).some((condition) => !isSessionAttribute(condition.dimension));
  } catch {
    return false;
  }
}

/** The 4xx status of an http-errors style error (`status`/`statusCode`), if it is one. */
function httpErrorStatus(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null) return undefined;
  const e = exception as { status?: unknown; statusCode?: unknown; expose?: unknown };
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 && e.expose !== false
    ? status
    : undefined;
}

function isProblem(value: unknown): value is ProblemBody {
  return (
    typeof value === 'object' && value !== null && 'type' in value && 'title' in value && 'status' in value
  );
}

function describe(status: number, response: unknown): string {
  if (status === Number(HttpStatus.NOT_FOUND)) return 'No resource at this path.';
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown })?.message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return problem(status, '').title;
}
