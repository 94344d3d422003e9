import type { AuthenticatedRequest } from '@app/auth';
import { AppConfig } from '@app/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule, Params } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { requestIdOf } from './request-id';

type Req = IncomingMessage & Partial<AuthenticatedRequest> & { id?: string | number };
type Res = ServerResponse;

const MAX_LOGGED_URL = 1000;

/** The fields of a request's log line: never a header, so never a key. */
export function requestFields(req: Req, res: Res, durationMs: number) {
  const url = req.originalUrl ?? req.url ?? '';
  return {
    method: req.method,
    route: routeTemplate(req),
    url: url.length > MAX_LOGGED_URL ? `${url.slice(0, MAX_LOGGED_URL)}…` : url,
    status: res.statusCode,
    duration_ms: durationMs,
    key_id: req.principal?.keyId ?? null,
    site_id: req.site?.id ?? null,
    remote_address: req.ip ?? req.socket?.remoteAddress ?? null,
  };
}

/**
 * One JSON line per request (pino), after the response: request id, method, route template,
 * status, duration, key id and site id. Lines the application logs while serving a request
 * carry the same request_id. Authorization and Cookie are redacted should anything ever log
 * the headers.
 */
export function loggerParams(config: AppConfig): Params<Req, Res> {
  return {
    pinoHttp: {
      level: config.logLevel,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'authorization'],
        censor: '[redacted]',
      },
      customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
      genReqId: (req) => req.id ?? requestIdOf(req.headers['x-request-id']),
      quietReqLogger: true,
      quietResLogger: true,
      autoLogging: { ignore: (req) => (req.originalUrl ?? req.url ?? '').startsWith('/health') },
      // 500 is a bug; 503 (database down, query over budget) an expected, retryable state.
      customLogLevel: (_req, res, error) =>
        error || res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info',
      customSuccessMessage: (req, res) => `${req.method} ${routeOrPath(req)} ${res.statusCode}`,
      customErrorMessage: (req, res) => `${req.method} ${routeOrPath(req)} ${res.statusCode}`,
      customSuccessObject: (req, res, value: { duration_ms?: number }) =>
        requestFields(req, res, value.duration_ms ?? 0),
      customErrorObject: (req, res, _error, value: { duration_ms?: number }) =>
        requestFields(req, res, value.duration_ms ?? 0),
    },
  };
}

/**
 * The route template (`/api/v1/sites/:id/events`) of a request that reached a handler. A
 * request answered by a middleware (404, 405, 429, 503) carries the middleware's mount path
 * (`/api/v1/{*path}`) instead, which names no route.
 */
function routeTemplate(req: Req): string | null {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  return typeof route === 'string' && !route.includes('{') ? route : null;
}

function routeOrPath(req: Req): string {
  return routeTemplate(req) ?? (req.originalUrl ?? req.url ?? '').split('?')[0].slice(0, 200);
}

export const LoggingModule = LoggerModule.forRootAsync({
  inject: [AppConfig],
  useFactory: loggerParams,
});
