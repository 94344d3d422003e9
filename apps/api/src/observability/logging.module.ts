import type { AuthenticatedRequest } from '@app/auth';
import { AppConfig } from '@app/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule, Params } from 'nestjs-pino';
import { levels, stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import { requestIdOf } from './request-id';

type Req = IncomingMessage & Partial<AuthenticatedRequest> & { id?: string | number };
type Res = ServerResponse;

const MAX_LOGGED_URL = 1000;

/**
 * Anything shaped like an API key (`sk_` or its percent-encoded `sk%5F`, then 16 or more
 * base64url characters), wherever it appears: a key sent in the query string under any
 * parameter name, in the path, in a header.
 */
const KEY_SHAPED = /sk(?:_|%5f)(?:[A-Za-z0-9_-]|%5f|%2d){16,}/gi;
export const REDACTED_KEY = 'sk_[redacted]';

export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, REDACTED_KEY);
}

/** Redacts key-shaped strings in every string of a log line's fields, however deep. */
export function redactKeysDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactKeys(value) as T;
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => redactKeysDeep(v, depth + 1)) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] = redactKeysDeep(v, depth + 1);
  return out as T;
}

/** The fields of a request's log line: never a header, and the URL with any key redacted. */
export function requestFields(req: Req, res: Res, durationMs: number) {
  const url = redactKeys(req.originalUrl ?? req.url ?? '');
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
export function loggerParams(config: AppConfig): Params {
  // pino's 'silent' is above every level.
  const threshold = levels.values[config.logLevel] ?? Number.POSITIVE_INFINITY;
  const pinoHttp: Options<Req, Res> = {
    level: config.logLevel,
    timestamp: stdTimeFunctions.isoTime,
    // Whatever a line carries (a URL, a header, a message), a key-shaped string is redacted.
    formatters: { level: (label) => ({ level: label }), log: (object) => redactKeysDeep(object) },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a: unknown) => redactKeysDeep(a)) as Parameters<typeof method>);
      },
    },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'authorization'],
      censor: '[redacted]',
    },
    customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
    genReqId: (req) => req.id ?? requestIdOf(req.headers['x-request-id']),
    quietReqLogger: true,
    quietResLogger: true,
    autoLogging: { ignore: (req) => (req.originalUrl ?? req.url ?? '').startsWith('/health') },
    // 500 is a bug; 503 (database down, query over budget) an expected, retryable state. A
    // line below the configured level is 'silent', so that pino-http does not build its fields
    // and message (URL redaction included) for a line pino would then drop.
    customLogLevel: (_req, res, error) => {
      const level = error || res.statusCode === 500 ? 'error' : res.statusCode >= 500 ? 'warn' : 'info';
      return levels.values[level] >= threshold ? level : 'silent';
    },
    customSuccessMessage: (req, res) => `${req.method} ${routeOrPath(req)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${routeOrPath(req)} ${res.statusCode}`,
    customSuccessObject: (req, res, value: { duration_ms?: number }) =>
      requestFields(req, res, value.duration_ms ?? 0),
    customErrorObject: (req, res, _error, value: { duration_ms?: number }) =>
      requestFields(req, res, value.duration_ms ?? 0),
  };
  if (config.logFormat === 'pretty') {
    // Human-readable lines for a terminal (LOG_FORMAT=pretty, or auto on a TTY); JSON otherwise.
    pinoHttp.transport = {
      target: 'pino-pretty',
      options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,req,res', singleLine: true },
    };
  }
  return { pinoHttp: pinoHttp as Options };
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
  return routeTemplate(req) ?? redactKeys((req.originalUrl ?? req.url ?? '').split('?')[0]).slice(0, 200);
}

export const LoggingModule = LoggerModule.forRootAsync({
  inject: [AppConfig],
  useFactory: loggerParams,
});
