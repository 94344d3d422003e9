const RETRYABLE = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);

/** Runs a transaction body again when InnoDB chose it as a deadlock victim. */
export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (e) {
      const code =
        (e as { code?: string; driverError?: { code?: string } }).driverError?.code ??
        (e as { code?: string }).code;
      if (attempt >= attempts || !code || !RETRYABLE.has(code)) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
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
    driverError?: { errno?: number; sqlState?: string };
  };
  const errno = e?.driverError?.errno ?? e?.errno;
  const state = e?.driverError?.sqlState ?? e?.sqlState ?? '';
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
