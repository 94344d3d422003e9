import type BetterSqlite3 from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { datetimeColumns, SqliteRow, storedDatetime, withDates } from './datetimes';

/** The SQL function sqliteDialect.md5Bytes calls: MD5 as 16 bytes, registered on each connection. */
export const MD5_BYTES = 'md5_bytes';

/** The one line a user sees when the embedded engine cannot run on their machine. */
export const EMBEDDED_ENGINE_UNAVAILABLE =
  'the embedded SQLite engine needs the optional package better-sqlite3, which is not installed or could not be built on this machine; set DATABASE_URL to use MariaDB/MySQL';

/** What the API and the CLI say at start when they run on the embedded engine. */
export function embeddedEngineLine(file: string): string {
  return `embedded SQLite at ${file}; set DATABASE_URL for MariaDB/MySQL`;
}

type BindValue = number | string | bigint | Buffer | null;

/** A query parameter as better-sqlite3 binds it: Dates in the stored UTC text form, booleans as 0/1. */
export function toSqliteParameter(value: unknown): BindValue {
  if (value instanceof Date) return storedDatetime(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as BindValue;
}

/** better-sqlite3 cannot be loaded: the message is the one line a user needs. */
export class EmbeddedEngineUnavailableError extends Error {
  constructor(cause: unknown) {
    super(EMBEDDED_ENGINE_UNAVAILABLE, { cause });
  }
}

/** better-sqlite3 itself (its native addon loaded), or EmbeddedEngineUnavailableError. */
export function loadBetterSqlite3(): typeof BetterSqlite3 {
  try {
    // Optional dependency: loaded only when the embedded engine is chosen.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Database = require('better-sqlite3') as typeof BetterSqlite3;
    new Database(':memory:').close();
    return Database;
  } catch (e) {
    throw new EmbeddedEngineUnavailableError(e);
  }
}

/** The SQL functions the dialect's statements call (md5_bytes), on one connection. */
export function registerSqlFunctions(db: Pick<BetterSqlite3.Database, 'function'>): void {
  db.function(MD5_BYTES, { deterministic: true }, (text: string | null) =>
    text === null ? null : createHash('md5').update(text, 'utf8').digest(),
  );
}

/**
 * better-sqlite3 for TypeORM's `driver` option, binding Date parameters as the stored UTC
 * text (the driver binds only numbers, strings, bigints and buffers, and TypeORM converts
 * Dates only for entity columns, not in `query()`).
 */
export function embeddedSqliteDriver(): typeof BetterSqlite3 {
  const Database = loadBetterSqlite3();
  function open(file: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
    const db = new Database(file, options);
    registerSqlFunctions(db);
    const prepare = db.prepare.bind(db) as (source: string) => BetterSqlite3.Statement;
    db.prepare = ((source: string) => bindingDates(prepare(source))) as typeof db.prepare;
    return db;
  }
  // TypeORM calls it with `new`: a constructor that returns an object yields that object.
  return open as unknown as typeof BetterSqlite3;
}

function bindingDates(statement: BetterSqlite3.Statement): BetterSqlite3.Statement {
  const dates = statement.reader ? datetimeColumns(statement) : [];
  for (const method of ['all', 'get', 'run', 'iterate'] as const) {
    const original = (statement[method] as (...p: unknown[]) => unknown).bind(statement);
    (statement as unknown as Record<string, unknown>)[method] = (...params: unknown[]) => {
      const result = original(...params.map(toSqliteParameter));
      if (dates.length === 0) return result;
      if (method === 'all') return (result as SqliteRow[]).map((row) => withDates(row, dates));
      if (method === 'get') return result === undefined ? result : withDates(result as SqliteRow, dates);
      return result;
    };
  }
  return statement;
}
