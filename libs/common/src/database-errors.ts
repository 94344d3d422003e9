const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_ACCESS_DENIED_ERROR',
  'ER_BAD_DB_ERROR',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
  'POOL_CLOSED',
  'DATABASE_UNAVAILABLE',
]);

/**
 * Driver and pool failures that carry no code: the pool is closed or its queue full, TypeORM
 * has not connected yet (the API booted without a database), a connection was lost.
 */
const UNAVAILABLE_MESSAGES =
  /Pool is closed|Queue limit reached|No connections available|Connection is not established|connect ETIMEDOUT|Connection lost|closed state/i;

interface DriverLikeError {
  message?: string;
  code?: string;
  errno?: number;
  fatal?: boolean;
  driverError?: DriverLikeError;
  name?: string;
}

function driverError(error: unknown): DriverLikeError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as DriverLikeError;
  return e.driverError ?? e;
}

/** The server aborted a statement that ran over its budget (MariaDB 1969, MySQL 3024). */
export function isTimeBudgetError(error: unknown): boolean {
  const e = driverError(error);
  return e?.errno === 1969 || e?.errno === 3024;
}

/** Connection-level failures: the database is down, unreachable or refusing us. */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const e = driverError(error);
  if (!e) return false;
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  if (e.fatal === true) return true;
  return (
    e.name === 'CannotConnectError' ||
    UNAVAILABLE_MESSAGES.test(String((error as Error).message ?? '')) ||
    UNAVAILABLE_MESSAGES.test(String(e.message ?? ''))
  );
}
