import { CompiledQuery, Expression, RawBuilder, sql } from 'kysely';
import {
  compileOnlyBuilder,
  DecimalScale,
  incrementRows,
  INDEX_HINT,
  INDEX_HINT_MARKER,
  parameterRows,
  ReplicationPosition,
  SqlDialect,
} from '../dialect';
import { storedDatetime } from './datetimes';
import { MD5_BYTES } from './embedded-driver';
import { isSqliteTimeBudgetError } from './sqlite-read-pool';

/** strftime's form of the stored UTC datetimes: `YYYY-MM-DD HH:MM:SS.SSS`, ordered as text. */
const DATETIME = `'%Y-%m-%d %H:%M:%f'`;

/**
 * The embedded engine (issue #15). Datetimes are stored as UTC text in one fixed form (the
 * one TypeORM's SQLite driver writes), so text order is time order and SQLite's date
 * functions read them; exact decimals are integers of hundredths (money) or thousandths
 * (seconds), since SQLite's only non-integer type is a float.
 */
class SqliteDialect implements SqlDialect {
  readonly name = 'sqlite' as const;
  readonly builder = compileOnlyBuilder('sqlite');
  readonly writeIsolation = 'SERIALIZABLE' as const;
  readonly writers = 1;
  /** SQLite's BINARY compares bytes and never pads: MariaDB's utf8mb4_nopad_bin. */
  readonly exactCollation = 'BINARY';

  insertIgnore(table: string, columns: readonly string[], rows: number): string {
    return `INSERT OR IGNORE INTO ${table} (${columns.join(',')}) VALUES ${parameterRows(columns, rows)}`;
  }

  replaceInto(table: string, columns: readonly string[]): string {
    return `REPLACE INTO ${table} (${columns.join(',')})`;
  }

  rowsIn(columns: readonly string[], rows: number): string {
    // SQLite compares a row value with a list of rows only through VALUES.
    return `(${columns.join(', ')}) IN (VALUES ${parameterRows(Array(columns.length).fill('?'), rows, ', ')})`;
  }

  upsertIncrement(table: string, columns: readonly string[], counter: string, rows: number): string {
    const others = columns.filter((c, i) => i > 0 && c !== counter);
    return (
      `INSERT INTO ${table} (${columns.join(',')}) VALUES ${incrementRows(columns, counter, rows)} ` +
      `ON CONFLICT (${columns[0]}) DO UPDATE SET ${counter} = ${counter} + 1${others.map((c) => `, ${c} = excluded.${c}`).join('')}`
    );
  }

  upsertMax(table: string, keys: readonly string[], column: string, rows: number): string {
    return (
      `INSERT INTO ${table} (${[...keys, column].join(',')}) VALUES ${parameterRows([...keys, column], rows)} ` +
      `ON CONFLICT (${keys.join(',')}) DO UPDATE SET ${column} = MAX(${column}, excluded.${column})`
    );
  }

  upsertAdd(
    table: string,
    keys: readonly string[],
    sums: readonly string[],
    rows: number,
    uniqueKey: readonly string[] = keys,
  ): string {
    const columns = [...keys, ...sums];
    return (
      `INSERT INTO ${table} (${columns.join(',')}) VALUES ${parameterRows(columns, rows)} ` +
      `ON CONFLICT (${uniqueKey.join(',')}) DO UPDATE SET ${sums.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`
    );
  }

  upsertAddSelect(table: string, keys: readonly string[], sums: readonly string[], select: string): string {
    // "WHERE true": SQLite would read a bare ON after the SELECT as a join's ON clause.
    return (
      `INSERT INTO ${table} (${[...keys, ...sums].join(',')}) SELECT * FROM (${select}) WHERE true ` +
      `ON CONFLICT (${keys.join(',')}) DO UPDATE SET ${sums.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`
    );
  }

  md5Bytes(text: string): string {
    // SQLite has no MD5: the embedded driver registers this function on each connection it opens.
    return `${MD5_BYTES}(${text})`;
  }

  floorToQuarterHour(datetime: string): string {
    return `strftime(${DATETIME}, (unixepoch(${datetime}) / 900) * 900, 'unixepoch')`;
  }

  floorToUtcDay(datetime: string): string {
    return `strftime(${DATETIME}, (unixepoch(${datetime}) / 86400) * 86400, 'unixepoch')`;
  }

  deleteByPrimaryKey(table: string): string {
    // SQLite plans a key list on the primary key by itself (one writer: no row locks either).
    return `DELETE FROM ${table}`;
  }

  deleteWithIndex(table: string, index: string): string {
    return `DELETE FROM ${table} INDEXED BY ${index}`;
  }

  updateWithIndex(table: string, index: string): string {
    return `UPDATE ${table} INDEXED BY ${index}`;
  }

  updateFromRows(table: string, alias: string, source: string, on: string, column: string): string {
    // SQLite 3.33's UPDATE … FROM: the SET names the column unqualified.
    return `UPDATE ${table} AS ${alias} SET ${column} = x.${column} FROM (${source}) AS x WHERE ${on}`;
  }

  tableByPrimaryKey(table: string, alias?: string): string {
    // As deleteByPrimaryKey: SQLite plans a key list on the primary key by itself.
    return alias === undefined ? table : `${table} ${alias}`;
  }

  lockingRead(select: string): string {
    // A write transaction holds the whole database: nothing else can change the rows read.
    return select;
  }

  lockingReadEach(select: string, conditions: readonly string[]): string {
    // No row locks to take (above); one condition, as a compound SELECT holds at most 500 parts.
    return `${select} WHERE ${conditions.map((c) => `(${c})`).join(' OR ')}`;
  }

  tableWithIndex(table: string, alias: string, index: string): string {
    // The lookups that name an index are equality-prefixed on it (site, session or step): without
    // the hint SQLite, too, picked (site_id, type, ts) for a session's first pageview and read
    // every pageview of the site per session. INDEXED BY fails a statement the index cannot serve.
    return `${table} ${alias} INDEXED BY ${index}`;
  }

  // SQLite keeps the left table of a CROSS JOIN outside (its documented way to fix an order).
  readonly orderedJoin = 'CROSS JOIN';

  tableWithoutIndex(table: string, alias: string): string {
    // SQLite can only turn every index off (NOT INDEXED); its planner is left to choose.
    return `${table} ${alias}`;
  }

  renderIndexHints(compiled: CompiledQuery): CompiledQuery {
    if (!compiled.sql.includes(INDEX_HINT_MARKER)) return compiled;
    // INDEXED BY names one index: of a marker's several, the first.
    return {
      ...compiled,
      sql: compiled.sql.replace(INDEX_HINT, (_, indexes: string) => `INDEXED BY ${indexes.split(',')[0]}`),
    };
  }

  materialized(select: RawBuilder<unknown>): RawBuilder<unknown> {
    // A subquery with a LIMIT is not flattened into a join; -1 limits nothing.
    return sql`${select} LIMIT -1`;
  }

  addSeconds(datetime: Expression<unknown>, seconds: Expression<unknown>): RawBuilder<Date> {
    return sql<Date>`strftime(${sql.raw(DATETIME)}, ${datetime}, (${seconds}) || ' seconds')`;
  }

  dateOf(datetime: Expression<unknown>): RawBuilder<string> {
    return sql<string>`substr(${datetime}, 1, 10)`;
  }

  epochSeconds(datetime: Expression<unknown>): RawBuilder<number> {
    return sql<number>`unixepoch(${datetime})`;
  }

  pathGroupKey(path: Expression<unknown>): RawBuilder<unknown>[] {
    return [sql`${path}`];
  }

  secondsBetween(from: Expression<unknown>, to: Expression<unknown>): RawBuilder<number> {
    return sql<number>`(${epochMillis(to)} - ${epochMillis(from)})`;
  }

  decimalIn(value: string | number | null, scale: DecimalScale): number | null {
    if (value === null) return null;
    // A number has already been rounded to the scale (the parser's time on page).
    return typeof value === 'number' ? Math.round(value * 10 ** scale) : scaledInteger(value, scale);
  }

  decimalText(value: Expression<unknown>, scale: DecimalScale): RawBuilder<string> {
    const unit = 10 ** scale;
    return sql<string>`(CASE WHEN ${value} < 0 THEN '-' ELSE '' END || printf('%d.%0${sql.raw(String(scale))}d', abs(${value}) / ${sql.lit(unit)}, abs(${value}) % ${sql.lit(unit)}))`;
  }

  blobOut(value: Expression<unknown>): RawBuilder<string> {
    return sql<string>`HEX(${value})`;
  }

  bucketIndex(value: Expression<unknown>, starts: readonly number[]): RawBuilder<number> {
    // No INTERVAL(): a binary search written out as nested CASEs over the starts as stored
    // text, so a row costs log2(buckets) text comparisons and no date function.
    const text = starts.map((s) => storedDatetime(new Date(s * 1000)));
    const search = (lo: number, hi: number): RawBuilder<number> => {
      if (hi - lo === 1) return sql<number>`${sql.lit(lo)}`;
      const mid = (lo + hi) >> 1;
      return sql<number>`(CASE WHEN ${value} < ${sql.lit(text[mid])} THEN ${search(lo, mid)} ELSE ${search(mid, hi)} END)`;
    };
    return search(0, text.length);
  }

  withTimeBudget(select: string): string {
    // SQLite has no statement timeout: SqliteReadPool stops an over-budget read.
    return select;
  }

  isTimeBudgetError(error: unknown): boolean {
    return isSqliteTimeBudgetError(error);
  }

  get cancelStatement(): string {
    throw new Error('the embedded SQLite engine has no server to cancel a statement on');
  }

  replicationPosition(): string {
    throw new Error('the embedded SQLite engine has no replicas');
  }

  parseReplicationPosition(): ReplicationPosition {
    throw new Error('the embedded SQLite engine has no replicas');
  }
}

/** Whole milliseconds since the epoch of a stored datetime, exactly (integer arithmetic). */
function epochMillis(datetime: Expression<unknown>): RawBuilder<number> {
  return sql<number>`(unixepoch(${datetime}) * 1000 + CAST(substr(${datetime}, 21, 3) AS INTEGER))`;
}

/** `"12.3"` at scale 2 → 1230, without going through a float. */
export function scaledInteger(value: string, scale: DecimalScale): number {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match) throw new Error(`not an exact decimal: ${value}`);
  const [, sign, whole, fraction = ''] = match;
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale)))
    throw new Error(`${value} has more than ${scale} decimals`);
  const n = BigInt(whole + fraction.slice(0, scale).padEnd(scale, '0'));
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${value} is too large to store exactly`);
  return Number(sign ? -n : n);
}

export const sqliteDialect: SqlDialect = new SqliteDialect();
