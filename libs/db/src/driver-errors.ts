import { PrivilegedDatabaseUserError } from './least-privilege';
/**
 * How the mysql2 driver (through TypeORM) reports failures: which errors mean the database is
 * unavailable. SQL-level meanings of server error numbers belong to the dialect.
 */
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

/** The server aborted a statement with one of `errnos` (the dialect knows which mean what). */
export function hasServerErrno(error: unknown, errnos: readonly number[]): boolean {
  const errno = driverError(error)?.errno;
  return errno !== undefined && errnos.includes(errno);
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

/** Why a database call failed, without credentials: a driver code or the start of its message. */
export function describeDatabaseError(error: unknown): string {
  // A refused privileged user explains itself (least-privilege.ts); its message names no secret.
  if (error instanceof PrivilegedDatabaseUserError) return error.message;
  const e = error as { code?: string; message?: string; driverError?: { code?: string } };
  return e?.code ?? e?.driverError?.code ?? e?.message?.slice(0, 200) ?? String(error);
}

/**
 * The schema is not there: a table `migrate` creates is missing (the server's
 * ER_NO_SUCH_TABLE, SQLite's "no such table"), or the server has no such database
 * (ER_BAD_DB_ERROR), which `migrate` creates too.
 */
export function isMissingSchemaError(error: unknown): boolean {
  const e = driverError(error);
  if (!e) return false;
  if (e.code === 'ER_NO_SUCH_TABLE' || e.code === 'ER_BAD_DB_ERROR') return true;
  return [e.message, (error as Error).message].some((m) => /\bno such table: /.test(String(m ?? '')));
}

/** A transaction chosen as a deadlock victim, or one that waited too long for a row lock: run it again. */
export function isTransientLockError(error: unknown): boolean {
  const code = driverError(error)?.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT';
}

/** MySQL-family errors about one row's data, whatever its neighbours (no SQLSTATE of their own). */
const ROW_ERRNOS = new Set([
  1048, // column cannot be null
  1062, // duplicate entry
  1264, // out of range
  1292, // truncated wrong value
  1366, // incorrect string value
  1406, // data too long
  1452, // foreign key
  3819, // MySQL: check constraint violated
  4025, // MariaDB: CONSTRAINT failed
]);

/**
 * Whether the database refused the data of a row (a constraint, a value it cannot store), as
 * opposed to a fault of the connection or the server: SQLSTATE class 22 (data exception) or
 * 23 (integrity constraint violation), or one of the row-level errors above.
 */
export function isRefusedRowError(error: unknown): boolean {
  const e = error as {
    errno?: number;
    sqlState?: string;
    code?: string;
    driverError?: { errno?: number; sqlState?: string; code?: string };
  };
  const errno = e?.driverError?.errno ?? e?.errno;
  const state = e?.driverError?.sqlState ?? e?.sqlState ?? '';
  // better-sqlite3 (the embedded engine) names the failure instead: SQLITE_CONSTRAINT_CHECK…
  const code = e?.driverError?.code ?? e?.code;
  if (typeof code === 'string' && /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG)/.test(code)) return true;
  return /^2[23]/.test(state) || (errno !== undefined && ROW_ERRNOS.has(errno));
}

/** The server's own words about a refused row, without the SQL statement. */
export function refusalReason(error: unknown): string {
  const e = error as {
    sqlMessage?: string;
    message?: string;
    driverError?: { sqlMessage?: string; message?: string };
  };
  return (
    e?.driverError?.sqlMessage ??
    e?.sqlMessage ??
    e?.driverError?.message ??
    e?.message ??
    String(error)
  ).slice(0, 300);
}
