import { plainToInstance, Transform } from 'class-transformer';
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

/** The environment as read at boot; every variable is optional except a database location. */
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
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(3660)
  MAX_RANGE_DAYS?: number;
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

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: 'must be one of fatal, error, warn, info, debug, trace, silent',
  })
  LOG_LEVEL?: string;
}

export interface DatabaseLocation {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export interface Limits {
  rateLimitPerMinute: number;
  queryTimeoutMs: number;
  maxRangeDays: number;
  maxPageSize: number;
  funnelMaxSteps: number;
  funnelStepsMaxBytes: number;
}

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
  ) {}
}

export const DEFAULT_LIMITS: Limits = {
  rateLimitPerMinute: 600,
  queryTimeoutMs: 10_000,
  maxRangeDays: 731,
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
    maxRangeDays: parsed.MAX_RANGE_DAYS ?? DEFAULT_LIMITS.maxRangeDays,
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
    throw new ConfigError(
      'DATABASE_URL',
      'is required (for example mysql://root@127.0.0.1:3306/stats), or set DB_NAME with DB_HOST/DB_PORT/DB_USER/DB_PASSWORD',
    );
  }
  const apiDatabase = parsed.API_DATABASE_URL ? parseDatabaseUrl(parsed.API_DATABASE_URL) : database;

  return new AppConfig(
    database,
    apiDatabase,
    parsed.PORT ?? 3000,
    parsed.HOST ?? '0.0.0.0',
    limitsFrom(parsed),
    parsed.DB_POOL_SIZE ?? 10,
    parsed.DB_CONNECT_TIMEOUT_MS ?? 1000,
    parsed.LOG_LEVEL ?? 'info',
  );
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
