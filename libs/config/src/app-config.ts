import { plainToInstance, Transform } from 'class-transformer';
import path from 'node:path';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, validateSync } from 'class-validator';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Configuration error: ${variable} ${reason}`);
  }
}

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;

/** The environment as read at boot; every variable is optional (no server: the embedded engine). */
class Environment {
  @IsOptional()
  @Matches(/^(mysql|mariadb):\/\/[^/\s]+\/[A-Za-z0-9_$-]+(\?.*)?$/, {
    message: 'must look like mysql://user:password@host:3306/database',
  })
  DATABASE_URL?: string;

  /** Connection of the HTTP API; it should be a SELECT-only user. Defaults to DATABASE_URL. */
  @IsOptional()
  @Matches(/^(mysql|mariadb):\/\/[^/\s]+\/[A-Za-z0-9_$-]+(\?.*)?$/, {
    message: 'must look like mysql://user:password@host:3306/database',
  })
  API_DATABASE_URL?: string;

  /** Read replicas of the API's database, comma-separated mysql:// URLs; reports read from them. */
  @IsOptional()
  @Matches(
    /^\s*(mysql|mariadb):\/\/[^/\s,]+\/[A-Za-z0-9_$-]+(\?[^,\s]*)?\s*(,\s*(mysql|mariadb):\/\/[^/\s,]+\/[A-Za-z0-9_$-]+(\?[^,\s]*)?\s*)*,?\s*$/,
    { message: 'must be comma-separated URLs like mysql://user:password@replica:3306/database' },
  )
  API_DATABASE_REPLICA_URLS?: string;
  /** A replica further behind the primary than this is not read from. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(86_400)
  REPLICA_MAX_LAG_SECONDS?: number;

  @IsOptional() @IsString() DB_HOST?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(65535)
  DB_PORT?: number;
  @IsOptional() @IsString() DB_USER?: string;
  @IsOptional() @IsString() DB_PASSWORD?: string;
  @IsOptional() @Matches(/^[A-Za-z0-9_$-]+$/, { message: 'must be a plain database name' }) DB_NAME?: string;
  /** The embedded SQLite engine's file (default data/stats.sqlite), used when neither DATABASE_URL nor DB_NAME is set. */
  @IsOptional() @IsString() SQLITE_PATH?: string;

  @IsOptional() @Transform(toInt) @IsInt({ message: 'must be an integer' }) @Min(0) @Max(65535) PORT?: number;
  @IsOptional() @IsString() HOST?: string;

  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  RATE_LIMIT_PER_MINUTE?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(100)
  QUERY_TIMEOUT_MS?: number;
  /** Report requests one key may have running at once; one more is answered 429. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(1000)
  REPORT_CONCURRENCY_PER_KEY?: number;
  /** Report requests one site may have running at once, whatever the key; one more is answered 429. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(1000)
  REPORT_CONCURRENCY_PER_SITE?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(3660)
  MAX_RANGE_DAYS?: number;
  /** Visitors are counted exactly up to this many sessions in a range, estimated above it. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(0)
  @Max(1_000_000_000)
  VISITORS_EXACT_UP_TO?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(10000)
  MAX_PAGE_SIZE?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(50)
  FUNNEL_MAX_STEPS?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(64)
  FUNNEL_STEPS_MAX_BYTES?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(1000)
  DB_POOL_SIZE?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(100)
  DB_CONNECT_TIMEOUT_MS?: number;

  /** How many requests may wait for a pooled connection; one more fails at once (503). */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(0)
  DB_QUEUE_LIMIT?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(100)
  @Max(60_000)
  DB_HEALTH_INTERVAL_MS?: number;
  /** Lets the API run as a database user that can write (not recommended). */
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'must be true or false' })
  ALLOW_PRIVILEGED_DB_USER?: string;
  /** Host part of the read-only account `migrate` creates for API_DATABASE_URL's user. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9._%:-]{1,255}$/, { message: 'must be a MariaDB host pattern such as % or 10.0.%' })
  API_DB_USER_HOST?: string;

  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'must look like redis://host:6379' })
  REDIS_URL?: string;
  @IsOptional()
  @Matches(/^[A-Za-z0-9:_.-]{1,64}$/, { message: 'must be 1–64 letters, digits or : _ . -' })
  REDIS_KEY_PREFIX?: string;

  /** Memory for cached report answers in each process (without REDIS_URL); 0 turns the cache off. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(0)
  @Max(4096)
  REPORT_CACHE_MB?: number;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(86_400)
  REPORT_CACHE_TTL_SECONDS?: number;

  @IsOptional()
  @IsString()
  CORS_ORIGINS?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(256)
  @Max(65_536)
  MAX_URL_BYTES?: number;
  @IsOptional()
  @Matches(/^(true|false|\d{1,2}|[0-9A-Fa-f.:/,\s]+|loopback|linklocal|uniquelocal)$/, {
    message: 'must be true, false, a hop count, or a comma-separated list of addresses/subnets',
  })
  TRUST_PROXY?: string;
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS?: number;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: 'must be one of fatal, error, warn, info, debug, trace, silent',
  })
  LOG_LEVEL?: string;

  @IsOptional()
  @IsIn(['auto', 'json', 'pretty'], { message: 'must be one of auto, json, pretty' })
  LOG_FORMAT?: 'auto' | 'json' | 'pretty';
}

export interface DatabaseLocation {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** Where the embedded engine's file is when SQLITE_PATH does not say (relative to the working directory). */
export const DEFAULT_SQLITE_PATH = 'data/stats.sqlite';

/** The embedded engine: one SQLite file, no server (issue #15). */
export interface EmbeddedDatabase {
  /** Absolute path of the SQLite file. */
  path: string;
}

export interface Limits {
  rateLimitPerMinute: number;
  queryTimeoutMs: number;
  /** Report requests (and pooled connections) one key may hold at once. */
  concurrencyPerKey: number;
  /** Report requests (and pooled connections) one site may hold at once, across keys. */
  concurrencyPerSite: number;
  maxRangeDays: number;
  /**
   * A range of more than one day with more sessions than this counts its visitors from the
   * HyperLogLog sketches (within 1 %, SPEC §1); up to it, exactly. 0: always the sketches.
   */
  visitorsExactUpTo: number;
  maxPageSize: number;
  funnelMaxSteps: number;
  funnelStepsMaxBytes: number;
}

export interface HttpSettings {
  /** Origins allowed by CORS; empty: CORS off. `*` allows any origin. */
  corsOrigins: string[];
  /** Longest request target (path and query) accepted; longer is a 414. */
  maxUrlBytes: number;
  /** Express `trust proxy`: whose X-Forwarded-For to believe for the client address. */
  trustProxy: boolean | number | string;
  /** How long SIGTERM waits for in-flight requests before the process exits anyway. */
  shutdownTimeoutMs: number;
}

export interface RedisSettings {
  /** Shared rate-limit counters; unset: each process counts on its own. */
  url: string | undefined;
  keyPrefix: string;
}

export interface DatabaseReliability {
  /** Requests that may wait for a pooled connection; beyond it a request fails at once (503). */
  queueLimit: number;
  /** How often the API checks the database (and reconnects when it booted without one). */
  healthIntervalMs: number;
  /** Host part of the read-only database account created by `migrate`. */
  apiUserHost: string;
  /** Whether the API may run as a user that can write (ALLOW_PRIVILEGED_DB_USER=true). */
  allowPrivilegedUser: boolean;
}

export interface ReplicaSettings {
  /** Read replicas of `apiDatabase`, same user and database; empty: everything reads the primary. */
  locations: DatabaseLocation[];
  /** A replica further behind the primary than this is skipped. */
  maxLagSeconds: number;
}

export const DEFAULT_REPLICAS: ReplicaSettings = { locations: [], maxLagSeconds: 30 };

export const DEFAULT_HTTP: HttpSettings = {
  corsOrigins: [],
  maxUrlBytes: 8192,
  trustProxy: false,
  shutdownTimeoutMs: 10_000,
};

export const DEFAULT_DB_RELIABILITY: DatabaseReliability = {
  queueLimit: 1000,
  healthIntervalMs: 1000,
  apiUserHost: '%',
  allowPrivilegedUser: false,
};

/** Typed, validated configuration; injected wherever a setting is needed. */
export class AppConfig {
  constructor(
    /** Admin connection: migrations and the operator CLI. */
    readonly database: DatabaseLocation,
    /** Connection used by the HTTP API. */
    readonly apiDatabase: DatabaseLocation,
    readonly port: number,
    readonly host: string,
    readonly limits: Limits,
    readonly dbPoolSize: number,
    readonly dbConnectTimeoutMs: number,
    readonly logLevel: string,
    readonly http: HttpSettings = DEFAULT_HTTP,
    readonly redis: RedisSettings = { url: undefined, keyPrefix: 'stats-api:' },
    readonly dbReliability: DatabaseReliability = DEFAULT_DB_RELIABILITY,
    /** JSON lines (for log collectors), or human-readable lines (pino-pretty) on a terminal. */
    readonly logFormat: 'json' | 'pretty' = 'json',
    readonly reportCache: ReportCacheSettings = DEFAULT_REPORT_CACHE,
    /** Read replicas of the API's database. */
    readonly replicas: ReplicaSettings = DEFAULT_REPLICAS,
    /**
     * Set: the embedded SQLite engine, and `database`/`apiDatabase` only name its file (their
     * `database`); unset: the MySQL-family server of `database`.
     */
    readonly embedded: EmbeddedDatabase | undefined = undefined,
  ) {}

  get engine(): 'mysql' | 'sqlite' {
    return this.embedded ? 'sqlite' : 'mysql';
  }
}

export interface ReportCacheSettings {
  /** 0: no cache. */
  maxBytes: number;
  ttlMs: number;
}

export const DEFAULT_REPORT_CACHE: ReportCacheSettings = { maxBytes: 64 * 1024 * 1024, ttlMs: 600_000 };

export const DEFAULT_LIMITS: Limits = {
  rateLimitPerMinute: 600,
  queryTimeoutMs: 10_000,
  concurrencyPerKey: 4,
  concurrencyPerSite: 6,
  maxRangeDays: 731,
  visitorsExactUpTo: 50_000,
  maxPageSize: 1000,
  funnelMaxSteps: 10,
  funnelStepsMaxBytes: 4096,
};

export function parseDatabaseUrl(url: string): DatabaseLocation {
  const u = new URL(url);
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')),
  };
}

function parseEnvironment(env: NodeJS.ProcessEnv): Environment {
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') raw[k] = v;
  const parsed = plainToInstance(Environment, raw);
  const errors = validateSync(parsed);
  if (errors.length > 0) {
    const first = errors[0];
    const message = Object.values(first.constraints ?? {})[0] ?? 'is invalid';
    throw new ConfigError(first.property, message.replace(new RegExp(`^${first.property}\\s*`), ''));
  }
  return parsed;
}

function limitsFrom(parsed: Environment): Limits {
  return {
    rateLimitPerMinute: parsed.RATE_LIMIT_PER_MINUTE ?? DEFAULT_LIMITS.rateLimitPerMinute,
    queryTimeoutMs: parsed.QUERY_TIMEOUT_MS ?? DEFAULT_LIMITS.queryTimeoutMs,
    concurrencyPerKey: parsed.REPORT_CONCURRENCY_PER_KEY ?? DEFAULT_LIMITS.concurrencyPerKey,
    concurrencyPerSite: parsed.REPORT_CONCURRENCY_PER_SITE ?? DEFAULT_LIMITS.concurrencyPerSite,
    maxRangeDays: parsed.MAX_RANGE_DAYS ?? DEFAULT_LIMITS.maxRangeDays,
    visitorsExactUpTo: parsed.VISITORS_EXACT_UP_TO ?? DEFAULT_LIMITS.visitorsExactUpTo,
    maxPageSize: parsed.MAX_PAGE_SIZE ?? DEFAULT_LIMITS.maxPageSize,
    funnelMaxSteps: parsed.FUNNEL_MAX_STEPS ?? DEFAULT_LIMITS.funnelMaxSteps,
    funnelStepsMaxBytes: parsed.FUNNEL_STEPS_MAX_BYTES ?? DEFAULT_LIMITS.funnelStepsMaxBytes,
  };
}

/**
 * Reads and validates the environment. Throws a ConfigError naming the first bad variable,
 * so that a process fails at boot with one clear line instead of at its first query.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = parseEnvironment(env);
  let database: DatabaseLocation;
  let embedded: EmbeddedDatabase | undefined;
  if (parsed.DATABASE_URL) {
    database = parseDatabaseUrl(parsed.DATABASE_URL);
  } else if (parsed.DB_NAME) {
    database = {
      host: parsed.DB_HOST ?? '127.0.0.1',
      port: parsed.DB_PORT ?? 3306,
      user: parsed.DB_USER ?? 'root',
      password: parsed.DB_PASSWORD ?? '',
      database: parsed.DB_NAME,
    };
  } else {
    // No server named: the embedded engine, zero setup (issue #15).
    embedded = { path: path.resolve(parsed.SQLITE_PATH ?? DEFAULT_SQLITE_PATH) };
    database = { host: 'localhost', port: 0, user: '', password: '', database: embedded.path };
  }
  if (embedded && (parsed.API_DATABASE_URL || parsed.API_DATABASE_REPLICA_URLS))
    throw new ConfigError(
      parsed.API_DATABASE_URL ? 'API_DATABASE_URL' : 'API_DATABASE_REPLICA_URLS',
      'needs a MySQL-family DATABASE_URL (the embedded SQLite engine has no server, accounts or replicas)',
    );
  const apiDatabase = parsed.API_DATABASE_URL ? parseDatabaseUrl(parsed.API_DATABASE_URL) : database;

  return new AppConfig(
    database,
    apiDatabase,
    parsed.PORT ?? 3000,
    parsed.HOST ?? '0.0.0.0',
    limitsFrom(parsed),
    parsed.DB_POOL_SIZE ?? 10,
    // Short enough that a request to an unreachable database is answered 503 within a second.
    parsed.DB_CONNECT_TIMEOUT_MS ?? 500,
    parsed.LOG_LEVEL ?? 'info',
    {
      corsOrigins: (parsed.CORS_ORIGINS ?? '')
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
      maxUrlBytes: parsed.MAX_URL_BYTES ?? DEFAULT_HTTP.maxUrlBytes,
      trustProxy: parseTrustProxy(parsed.TRUST_PROXY),
      shutdownTimeoutMs: parsed.SHUTDOWN_TIMEOUT_MS ?? DEFAULT_HTTP.shutdownTimeoutMs,
    },
    { url: parsed.REDIS_URL, keyPrefix: parsed.REDIS_KEY_PREFIX ?? 'stats-api:' },
    {
      queueLimit: parsed.DB_QUEUE_LIMIT ?? DEFAULT_DB_RELIABILITY.queueLimit,
      healthIntervalMs: parsed.DB_HEALTH_INTERVAL_MS ?? DEFAULT_DB_RELIABILITY.healthIntervalMs,
      apiUserHost: parsed.API_DB_USER_HOST ?? DEFAULT_DB_RELIABILITY.apiUserHost,
      allowPrivilegedUser: parsed.ALLOW_PRIVILEGED_DB_USER === 'true',
    },
    // auto: human-readable on a terminal, JSON lines when the output goes to a file or a collector.
    (parsed.LOG_FORMAT ?? 'auto') === 'auto'
      ? process.stdout.isTTY
        ? 'pretty'
        : 'json'
      : (parsed.LOG_FORMAT as 'json' | 'pretty'),
    {
      maxBytes:
        parsed.REPORT_CACHE_MB === undefined
          ? DEFAULT_REPORT_CACHE.maxBytes
          : parsed.REPORT_CACHE_MB * 1024 * 1024,
      ttlMs: (parsed.REPORT_CACHE_TTL_SECONDS ?? DEFAULT_REPORT_CACHE.ttlMs / 1000) * 1000,
    },
    {
      locations: (parsed.API_DATABASE_REPLICA_URLS ?? '')
        .split(',')
        .map((u) => u.trim())
        .filter(Boolean)
        .map(parseDatabaseUrl),
      maxLagSeconds: parsed.REPLICA_MAX_LAG_SECONDS ?? DEFAULT_REPLICAS.maxLagSeconds,
    },
    embedded,
  );
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/**
 * Limits for the places that need them before any module exists (validation decorators on
 * DTOs). An invalid environment falls back to the defaults here; loadConfig() at boot
 * reports it and stops the process.
 */
export const LIMITS: Limits = (() => {
  try {
    return limitsFrom(parseEnvironment(process.env));
  } catch {
    return DEFAULT_LIMITS;
  }
})();
