/**
 * The one seam for SQL that differs between engines. Report and ingest queries are written in
 * portable SQL and call these helpers for the few constructs that are not; adding an engine
 * (SQLite) means adding one implementation here, not rewriting queries.
 */
export interface SqlDialect {
  readonly name: 'mariadb' | 'mysql';
  /** INSERT of `rows` rows that silently skips rows whose unique key already exists. */
  insertIgnore(table: string, columns: readonly string[], rows: number): string;
  /** INSERT … that overwrites the row with the same primary key. */
  replaceInto(table: string, columns: readonly string[]): string;
  /** A DATETIME expression moved by an integer number of seconds (an expression or `?`). */
  addSeconds(datetime: string, seconds: string): string;
  /** The calendar date (`YYYY-MM-DD` string) of a DATETIME expression. */
  dateOf(datetime: string): string;
  /** Whole seconds since the epoch of a UTC DATETIME expression. */
  epochSeconds(datetime: string): string;
  /** Fractional seconds between two DATETIME expressions. */
  secondsBetween(from: string, to: string): string;
  /** A SELECT statement that the server aborts once it runs longer than `ms`. */
  withTimeBudget(select: string, ms: number): string;
  /** Whether an error thrown by the driver means the time budget was exceeded. */
  isTimeBudgetError(error: unknown): boolean;
}

const placeholders = (columns: readonly string[]) => `(${columns.map(() => '?').join(',')})`;

class MysqlFamilyDialect implements SqlDialect {
  constructor(readonly name: 'mariadb' | 'mysql') {}

  insertIgnore(table: string, columns: readonly string[], rows: number): string {
    const row = placeholders(columns);
    return `INSERT IGNORE INTO ${table} (${columns.join(',')}) VALUES ${Array(rows).fill(row).join(',')}`;
  }

  replaceInto(table: string, columns: readonly string[]): string {
    return `REPLACE INTO ${table} (${columns.join(',')})`;
  }

  addSeconds(datetime: string, seconds: string): string {
    return `(${datetime} + INTERVAL ${seconds} SECOND)`;
  }

  dateOf(datetime: string): string {
    return `DATE_FORMAT(${datetime}, '%Y-%m-%d')`;
  }

  epochSeconds(datetime: string): string {
    return `TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', ${datetime})`;
  }

  secondsBetween(from: string, to: string): string {
    return `(TIMESTAMPDIFF(MICROSECOND, ${from}, ${to}) / 1000000)`;
  }

  withTimeBudget(select: string, ms: number): string {
    if (this.name === 'mariadb')
      return `SET STATEMENT max_statement_time=${(ms / 1000).toFixed(3)} FOR ${select}`;
    return select.replace(/^\s*SELECT\b/i, `SELECT /*+ MAX_EXECUTION_TIME(${Math.round(ms)}) */`);
  }

  isTimeBudgetError(error: unknown): boolean {
    const e = error as { errno?: number; code?: string; driverError?: { errno?: number } };
    const errno = e?.errno ?? e?.driverError?.errno;
    // 1969: MariaDB max_statement_time; 3024: MySQL max_execution_time.
    return errno === 1969 || errno === 3024;
  }
}

export const mariadbDialect: SqlDialect = new MysqlFamilyDialect('mariadb');
export const mysqlDialect: SqlDialect = new MysqlFamilyDialect('mysql');

/**
 * TypeORM keeps only the numeric part of VERSION(); MariaDB numbers start at 10 while MySQL
 * went from 5.7 to 8 and 9, so the major number tells them apart.
 */
export function dialectForServerVersion(version: string): SqlDialect {
  if (/mariadb/i.test(version)) return mariadbDialect;
  const major = Number(version.split('.')[0]);
  return Number.isFinite(major) && major >= 10 ? mariadbDialect : mysqlDialect;
}
