import type BetterSqlite3 from 'better-sqlite3';

/** A Date as SQLite stores datetimes here (UTC, `YYYY-MM-DD HH:MM:SS.SSS`). */
export function storedDatetime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

export type SqliteRow = Record<string, unknown>;

/** The result columns read straight from a column declared DATETIME. */
export function datetimeColumns(statement: BetterSqlite3.Statement): string[] {
  return statement
    .columns()
    .filter((c) => c.type !== null && /^DATETIME/i.test(c.type))
    .map((c) => c.name);
}

/** `row` with its stored datetimes as Dates, as mysql2 gives DATETIME columns. */
export function withDates(row: SqliteRow, columns: readonly string[]): SqliteRow {
  for (const name of columns) {
    const value = row[name];
    if (typeof value === 'string') row[name] = fromStoredDatetime(value);
  }
  return row;
}

/** The inverse of storedDatetime. */
export function fromStoredDatetime(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
