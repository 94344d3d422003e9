import {
  CompiledQuery,
  DummyDriver,
  Expression,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  RawBuilder,
  sql,
} from 'kysely';
import { hasServerErrno } from './driver-errors';
import type { StatsDatabase } from './schema';

/** The typed SQL builder of the statistics engine: it only compiles; TypeORM's pool runs the SQL. */
/** How tableWithIndexMarker's markers start (each engine's renderIndexHints looks for it). */
export const INDEX_HINT_MARKER = '/*@index ';
const INDEX_HINT_OPEN = INDEX_HINT_MARKER;
/** A marker: `/*@index name*\/`, or several names joined by commas. */
export const INDEX_HINT = /\/\*@index ([a-z_]+(?:,[a-z_]+)*)\*\//g;

/**
 * A table reference `table alias` read through `index`, for SQL built where no dialect is at
 * hand; SqlDialect.renderIndexHints turns the marker into the engine's hint when the
 * statement is run (ReportDb) or written to a snapshot. With several indexes, through one of
 * them: MariaDB chooses among them by cost (never another index or a scan of the table);
 * SQLite, which has no hint for a choice, reads the first.
 */
export function tableWithIndexMarker(
  table: string,
  alias: string,
  index: string | readonly string[],
): string {
  const indexes = typeof index === 'string' ? [index] : index;
  for (const name of indexes) if (!/^[a-z_]+$/.test(name)) throw new Error(`not an index name: ${name}`);
  if (indexes.length === 0) throw new Error('an index hint names no index');
  return `${table} ${alias} ${INDEX_HINT_OPEN}${indexes.join(',')}*/`;
}

export type StatsSql = Kysely<StatsDatabase>;

/**
 * The characters of a path that pathGroupKey groups by on the MySQL family: short enough that
 * MariaDB keeps the group in memory (a key of 200 utf8mb4 characters, 800 bytes).
 */
export const SHORT_TEXT_KEY = 200;

/**
 * The one seam for SQL that differs between engines. Queries are built with Kysely (the
 * builder's compiler quotes and binds for its engine) and call these helpers for the few
 * constructs Kysely does not abstract; adding an engine (SQLite) means adding one
 * implementation here, not rewriting queries.
 */
export interface SqlDialect {
  readonly name: 'mariadb' | 'mysql' | 'sqlite';
  /** A compile-only builder for this engine. */
  readonly builder: StatsSql;
  /**
   * The binary, NO PAD collation of utf8mb4: strings compare byte for byte, trailing spaces
   * included (`"e1"` and `"e1 "` are different ids). utf8mb4_bin pads, so it cannot be used.
   */
  readonly exactCollation: string;
  /** INSERT of `rows` rows that silently skips rows whose unique key already exists. */
  insertIgnore(table: string, columns: readonly string[], rows: number): string;
  /**
   * The isolation of the aggregator's chunk transactions: READ COMMITTED on the MySQL family
   * (row locks keep the chunk's sessions; REPEATABLE READ's gap locks would block importers),
   * SERIALIZABLE on SQLite, its only level (one writer at a time).
   */
  readonly writeIsolation: 'READ COMMITTED' | 'SERIALIZABLE';
  /**
   * How many write transactions one process runs at once where their rows are apart (the
   * aggregator's sites of a chunk): several on the MySQL family, whose row locks keep them
   * apart, so that one's round trips overlap another's work; one on SQLite, one writer.
   */
  readonly writers: number;
  /**
   * A condition that holds where `columns` equal those of one of `rows` rows of parameters
   * (one `?` per column, row after row), written so that an index on `columns` is used.
   */
  rowsIn(columns: readonly string[], rows: number): string;
  /** INSERT … that overwrites the row with the same primary key. */
  replaceInto(table: string, columns: readonly string[]): string;
  /**
   * Adds 1 to `counter` of the rows keyed by the first column of `columns` (one `?` row each:
   * key, then the other columns), inserting a row with counter 1 where none exists.
   */
  upsertIncrement(table: string, columns: readonly string[], counter: string, rows: number): string;
  /**
   * Inserts `rows` rows of `keys` then `sums` (one `?` each), adding the sums to those of a row
   * with the same key where one exists. `uniqueKey`: the table's primary key when `keys` also
   * holds columns stored beside it (default: `keys`).
   */
  upsertAdd(
    table: string,
    keys: readonly string[],
    sums: readonly string[],
    rows: number,
    uniqueKey?: readonly string[],
  ): string;
  /**
   * INSERT of `rows` rows (`keys` then `column`, one `?` each) that, where a row with those keys
   * exists, keeps the greater of its `column` and the new one (a bound that only grows).
   */
  upsertMax(table: string, keys: readonly string[], column: string, rows: number): string;
  /** The same, with the rows from `select` (its columns in the order of keys, then sums). */
  upsertAddSelect(table: string, keys: readonly string[], sums: readonly string[], select: string): string;
  /** The start of the 15-minute UTC bucket holding a DATETIME expression (no time-zone tables). */
  floorToQuarterHour(datetime: string): string;
  /** The 16-byte MD5 of a text expression's UTF-8 (NULL stays NULL), as md5() gives it in Node. */
  md5Bytes(text: string): string;
  /** The start of the UTC day holding a DATETIME expression. */
  floorToUtcDay(datetime: string): string;
  /** A SELECT that locks the rows it reads until the transaction ends. */
  lockingRead(select: string): string;
  /**
   * `select` (up to its WHERE) under each of `conditions`, the rows of all of them locked until
   * the transaction ends, in one statement whose parameters are the conditions' in order. Each
   * condition is planned on its own (MariaDB: a UNION ALL of locking reads): OR-ed into one
   * condition, MariaDB scans the whole table when the listed keys are a large share of it (a
   * queue nearly drained), and a locking scan waits for every row another transaction holds.
   */
  lockingReadEach(select: string, conditions: readonly string[]): string;
  /**
   * `DELETE … FROM table` (then `WHERE`) that finds its rows through the primary key whatever the
   * statistics say. For the queues (dirty_sessions, dirty_sketch_hours): taken while a queue was
   * near empty, MariaDB's statistics make a scan look cheaper than a list of keys, and a DELETE
   * that scans locks every row of the queue, so it waits for every other transaction that holds
   * one (another site's aggregation, an import queueing sessions) and holds them all up in turn.
   */
  deleteByPrimaryKey(table: string): string;
  /** `DELETE … FROM table` (then `WHERE`) that finds its rows through `index`, as deleteByPrimaryKey. */
  deleteWithIndex(table: string, index: string): string;
  /** `UPDATE table` (then `SET`, the table named as itself) that finds its rows through `index`, as deleteWithIndex. */
  updateWithIndex(table: string, index: string): string;
  /**
   * `UPDATE table alias … SET column = x.column` for each row of `source` (a SELECT, as `x`)
   * that `on` (over `alias` and `x`) matches: MariaDB's `UPDATE … JOIN`, SQLite's `UPDATE … FROM`.
   */
  updateFromRows(table: string, alias: string, source: string, on: string, column: string): string;
  /**
   * `table [alias]` (in a FROM or a join) read through its primary key whatever the statistics
   * say. For a read of many keys OR-ed (each a prefix of the key) in a backfill, when the
   * statistics were taken while the table was nearly empty and MariaDB scanned the whole table
   * instead, under a locking read waiting for every row the other writers held (the value
   * sketches: 16.1 of a smoke-size backfill's 31.3 s of statements); and for a lookup by the
   * whole key that MariaDB made through another index (the visitors of engagement's returning
   * split: 15,897 rows read per session instead of one).
   */
  tableByPrimaryKey(table: string, alias?: string): string;
  /**
   * `table alias` read through `index` whatever the optimizer's statistics say. For the
   * index-ordered `LIMIT 1` lookups (first hit of a session, a visitor's next funnel step):
   * with statistics taken while a table was small, MariaDB picked an index that avoids the
   * sort but scans every hit of the site, per session (minutes instead of milliseconds).
   */
  tableWithIndex(table: string, alias: string, index: string): string;
  /**
   * `table alias` read through any index but `index`, the optimizer choosing among the others
   * (and the table itself). For a read whose order `index` gives but whose columns it lacks:
   * MariaDB took the order over a sequential read of the rows (the distinct visitors of filtered
   * sessions by ix_sessions_site_visitor, each session's row then read by key: 5.2 s against
   * 2.1 s at 10M pageviews).
   */
  tableWithoutIndex(table: string, alias: string, index: string): string;
  /**
   * The inner join that keeps the tables in the order written, the left one read first
   * (`a ${orderedJoin} b ON …`). For a join that starts from a few sessions: under a page
   * filter MariaDB costed the selection of the sessions joined by key as cheap enough to read
   * every session of the site first (a one-day range's pageviews at 1M: 1.1 s instead of 0.25).
   */
  readonly orderedJoin: string;
  /**
   * `compiled` with each index-hint marker (indexHintMarker, written where no dialect is at
   * hand: the session selection of filters, the conversion test) rendered as this engine's
   * hint, as tableWithIndex would write it.
   */
  renderIndexHints(compiled: CompiledQuery): CompiledQuery;
  /**
   * `select`, to be used as a derived table, in a form the engine materialises once instead
   * of merging into the outer query. Merged, a derived column computed by a subquery (a funnel
   * step's lookup) is computed again wherever the outer query names it.
   */
  materialized(select: RawBuilder<unknown>): RawBuilder<unknown>;
  /** A DATETIME expression moved by a whole number of seconds. */
  addSeconds(datetime: Expression<unknown>, seconds: Expression<unknown>): RawBuilder<Date>;
  /** The calendar date (`YYYY-MM-DD` string) of a DATETIME expression. */
  dateOf(datetime: Expression<unknown>): RawBuilder<string>;
  /** Whole seconds since the epoch of a UTC DATETIME expression. */
  epochSeconds(datetime: Expression<unknown>): RawBuilder<number>;
  /**
   * What to GROUP BY for a path column (up to 2,048 characters) so that the groups are its
   * values', exactly: on the MySQL family its first SHORT_TEXT_KEY characters, with the MD5 of
   * the whole value beside them when it is longer (as the rollups key a path by its MD5), since
   * MariaDB groups a column that long in an on-disk temporary table (at 1M pageviews, the entry
   * pages of 91k sessions: 211–335 ms grouped by the path, 176–249 by this key); SQLite, which
   * groups by sorting, the column itself.
   */
  pathGroupKey(path: Expression<unknown>): RawBuilder<unknown>[];
  /** The exact seconds between two DATETIME expressions, in the stored form of decimalIn(…, 3). */
  secondsBetween(from: Expression<unknown>, to: Expression<unknown>): RawBuilder<number>;
  /**
   * An exact decimal (money: scale 2; seconds: scale 3) as bound for a column of that scale:
   * the decimal string itself on the MySQL family (DECIMAL columns), an integer number of
   * hundredths or thousandths on SQLite (which has no exact decimal type, only floats).
   * Sums and differences of stored values stay in the stored form.
   */
  decimalIn(value: string | number | null, scale: DecimalScale): string | number | null;
  /**
   * A stored exact decimal (or a sum of them) read back as its decimal string (`"12.30"`), as
   * the MySQL family's driver returns DECIMAL values. Apply it where a value leaves SQL, never
   * before an ORDER BY or a comparison (on SQLite the string orders as text).
   */
  decimalText(value: Expression<unknown>, scale: DecimalScale): RawBuilder<string>;
  /**
   * A stored BLOB as a report reads it: its bytes on the MySQL family (the driver gives a
   * Buffer), its hex text on SQLite, whose read pool sends rows as JSON, where a BLOB is an
   * array of numbers. At 10M pageviews the unfiltered overview's visitor sketches (1 MB) took
   * 10.6-12.4 ms to read as hex text and 2.7-3.7 ms as bytes (BENCHMARKS.md run CC).
   */
  blobOut(value: Expression<unknown>): RawBuilder<string | Uint8Array>;
  /**
   * The 0-based index of the bucket holding `value` among buckets starting at the ascending
   * `starts` (the last start ≤ value); rows must not lie before the first start.
   */
  bucketIndex(value: Expression<unknown>, starts: readonly number[]): RawBuilder<number>;
  /** A SELECT statement that the server aborts once it runs longer than `ms`. */
  withTimeBudget(select: string, ms: number): string;
  /** Whether an error thrown by the driver means the time budget was exceeded. */
  isTimeBudgetError(error: unknown): boolean;
  /**
   * A statement, with one `?` for the server's id of a connection, that stops the statement that
   * connection is running (its client went away); any user may stop its own connections' work.
   */
  readonly cancelStatement: string;
  /**
   * A SELECT of one column `pos`, readable by any user: the GTID position a primary has
   * written, or the one a replica has applied.
   */
  replicationPosition(role: 'primary' | 'replica'): string;
  /** A GTID position as the highest sequence number per stream (MariaDB domain, MySQL source uuid). */
  parseReplicationPosition(text: string | null): ReplicationPosition;
}

export type ReplicationPosition = ReadonlyMap<string, number>;

/** Digits after the point of an exact decimal column: money 2, seconds 3. */
export type DecimalScale = 2 | 3;

/** Whether a replica at `replica` has applied everything the primary had at `primary`. */
export function positionCovers(replica: ReplicationPosition, primary: ReplicationPosition): boolean {
  for (const [stream, seq] of primary) if ((replica.get(stream) ?? 0) < seq) return false;
  return true;
}

const placeholders = (columns: readonly string[]) => `(${columns.map(() => '?').join(',')})`;

/** `rows` rows of one `?` per column, as a multi-row VALUES list writes them (every engine). */
export function parameterRows(columns: readonly string[], rows: number, separator = ','): string {
  return Array(rows).fill(placeholders(columns)).join(separator);
}

/** The rows of upsertIncrement: `1` for the counter, `?` for every other column (every engine). */
export function incrementRows(columns: readonly string[], counter: string, rows: number): string {
  return Array(rows)
    .fill(`(${columns.map((c) => (c === counter ? '1' : '?')).join(',')})`)
    .join(',');
}

/** Kysely without a connection: `.compile()` gives SQL and parameters for TypeORM to run. */
export function compileOnlyBuilder(engine: 'mysql' | 'sqlite'): StatsSql {
  return new Kysely<StatsDatabase>({
    dialect:
      engine === 'mysql'
        ? {
            createAdapter: () => new MysqlAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new MysqlIntrospector(db),
            createQueryCompiler: () => new MysqlQueryCompiler(),
          }
        : {
            createAdapter: () => new SqliteAdapter(),
            createDriver: () => new DummyDriver(),
            createIntrospector: (db) => new SqliteIntrospector(db),
            createQueryCompiler: () => new SqliteQueryCompiler(),
          },
  });
}

/** MariaDB max_statement_time (1969) and MySQL max_execution_time (3024). */
const TIME_BUDGET_ERRNOS = [1969, 3024];

class MysqlFamilyDialect implements SqlDialect {
  readonly builder = compileOnlyBuilder('mysql');
  readonly writeIsolation = 'READ COMMITTED' as const;
  readonly writers = 4;
  readonly exactCollation: string;

  constructor(readonly name: 'mariadb' | 'mysql') {
    this.exactCollation = name === 'mariadb' ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
  }

  insertIgnore(table: string, columns: readonly string[], rows: number): string {
    return `INSERT IGNORE INTO ${table} (${columns.join(',')}) VALUES ${parameterRows(columns, rows)}`;
  }

  replaceInto(table: string, columns: readonly string[]): string {
    return `REPLACE INTO ${table} (${columns.join(',')})`;
  }

  rowsIn(columns: readonly string[], rows: number): string {
    // Not `(a, b) IN ((?, ?), …)`: MariaDB 10.11 builds no index range from a row constructor
    // whose columns include an ENUM compared with strings (the rollups' `dimension`), and read
    // every row of the site instead (EXPLAIN: 130,807 of session_path_rollups' rows at 1M for
    // two listed rows). Equalities joined by OR give one range per row.
    const row = `(${columns.map((c) => `${c} = ?`).join(' AND ')})`;
    return `(${Array(rows).fill(row).join(' OR ')})`;
  }

  upsertIncrement(table: string, columns: readonly string[], counter: string, rows: number): string {
    const others = columns.filter((c, i) => i > 0 && c !== counter);
    return (
      `INSERT INTO ${table} (${columns.join(',')}) VALUES ${incrementRows(columns, counter, rows)} ` +
      `ON DUPLICATE KEY UPDATE ${counter} = ${counter} + 1${others.map((c) => `, ${c} = VALUES(${c})`).join('')}`
    );
  }

  upsertAdd(table: string, keys: readonly string[], sums: readonly string[], rows: number): string {
    const columns = [...keys, ...sums];
    return (
      `${this.insertIgnore(table, columns, rows).replace('INSERT IGNORE', 'INSERT')} ` +
      `ON DUPLICATE KEY UPDATE ${sums.map((c) => `${c} = ${c} + VALUES(${c})`).join(', ')}`
    );
  }

  upsertMax(table: string, keys: readonly string[], column: string, rows: number): string {
    return (
      `INSERT INTO ${table} (${[...keys, column].join(',')}) VALUES ${parameterRows([...keys, column], rows)} ` +
      `ON DUPLICATE KEY UPDATE ${column} = GREATEST(${column}, VALUES(${column}))`
    );
  }

  upsertAddSelect(table: string, keys: readonly string[], sums: readonly string[], select: string): string {
    return (
      `INSERT INTO ${table} (${[...keys, ...sums].join(',')}) ${select} ` +
      `ON DUPLICATE KEY UPDATE ${sums.map((c) => `${c} = ${c} + VALUES(${c})`).join(', ')}`
    );
  }

  md5Bytes(text: string): string {
    return `UNHEX(MD5(${text}))`;
  }

  floorToQuarterHour(datetime: string): string {
    return `TIMESTAMPADD(MINUTE, FLOOR(TIMESTAMPDIFF(MINUTE, '1970-01-01 00:00:00', ${datetime}) / 15) * 15, '1970-01-01 00:00:00')`;
  }

  floorToUtcDay(datetime: string): string {
    return `TIMESTAMP(DATE(${datetime}))`;
  }

  lockingRead(select: string): string {
    return `${select} FOR UPDATE`;
  }

  lockingReadEach(select: string, conditions: readonly string[]): string {
    return conditions.map((c) => `(${select} WHERE ${c} FOR UPDATE)`).join(' UNION ALL ');
  }

  deleteByPrimaryKey(table: string): string {
    // A single-table DELETE takes no index hint; the multi-table form does.
    return `DELETE ${table} FROM ${table} FORCE INDEX (PRIMARY)`;
  }

  deleteWithIndex(table: string, index: string): string {
    return `DELETE ${table} FROM ${table} FORCE INDEX (${index})`;
  }

  updateWithIndex(table: string, index: string): string {
    return `UPDATE ${table} FORCE INDEX (${index})`;
  }

  updateFromRows(table: string, alias: string, source: string, on: string, column: string): string {
    return `UPDATE ${table} ${alias} JOIN (${source}) x ON ${on} SET ${alias}.${column} = x.${column}`;
  }

  tableByPrimaryKey(table: string, alias?: string): string {
    return `${alias === undefined ? table : `${table} ${alias}`} FORCE INDEX (PRIMARY)`;
  }

  tableWithIndex(table: string, alias: string, index: string): string {
    return `${table} ${alias} FORCE INDEX (${index})`;
  }

  materialized(select: RawBuilder<unknown>): RawBuilder<unknown> {
    // A derived table with a LIMIT is never merged (MariaDB and MySQL); this one limits nothing.
    return sql`${select} LIMIT 18446744073709551615`;
  }

  tableWithoutIndex(table: string, alias: string, index: string): string {
    return `${table} ${alias} IGNORE INDEX (${index})`;
  }

  readonly orderedJoin = 'STRAIGHT_JOIN';

  renderIndexHints(compiled: CompiledQuery): CompiledQuery {
    if (!compiled.sql.includes(INDEX_HINT_OPEN)) return compiled;
    return {
      ...compiled,
      sql: compiled.sql.replace(
        INDEX_HINT,
        (_, indexes: string) => `FORCE INDEX (${indexes.split(',').join(', ')})`,
      ),
    };
  }

  addSeconds(datetime: Expression<unknown>, seconds: Expression<unknown>): RawBuilder<Date> {
    return sql<Date>`(${datetime} + INTERVAL ${seconds} SECOND)`;
  }

  dateOf(datetime: Expression<unknown>): RawBuilder<string> {
    return sql<string>`DATE_FORMAT(${datetime}, '%Y-%m-%d')`;
  }

  epochSeconds(datetime: Expression<unknown>): RawBuilder<number> {
    return sql<number>`TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', ${datetime})`;
  }

  pathGroupKey(path: Expression<unknown>): RawBuilder<unknown>[] {
    const n = sql.lit(SHORT_TEXT_KEY);
    return [
      sql`LEFT(${path}, ${n})`,
      sql`CASE WHEN CHAR_LENGTH(${path}) > ${n} THEN UNHEX(MD5(${path})) END`,
    ];
  }

  secondsBetween(from: Expression<unknown>, to: Expression<unknown>): RawBuilder<number> {
    return sql<number>`(TIMESTAMPDIFF(MICROSECOND, ${from}, ${to}) / 1000000)`;
  }

  decimalIn(value: string | number | null): string | number | null {
    return value;
  }

  decimalText(value: Expression<unknown>): RawBuilder<string> {
    return sql<string>`${value}`;
  }

  blobOut(value: Expression<unknown>): RawBuilder<Uint8Array> {
    return sql<Uint8Array>`${value}`;
  }

  bucketIndex(value: Expression<unknown>, starts: readonly number[]): RawBuilder<number> {
    // INTERVAL() binary-searches the sorted starts, so every bucket costs the same.
    return sql<number>`(INTERVAL(${this.epochSeconds(value)}, ${sql.join(starts.map((s) => sql.val(s)))}) - 1)`;
  }

  withTimeBudget(select: string, ms: number): string {
    if (this.name === 'mariadb')
      return `SET STATEMENT max_statement_time=${(ms / 1000).toFixed(3)} FOR ${select}`;
    return select.replace(/^\s*SELECT\b/i, `SELECT /*+ MAX_EXECUTION_TIME(${Math.round(ms)}) */`);
  }

  readonly cancelStatement = 'KILL QUERY ?';

  isTimeBudgetError(error: unknown): boolean {
    return hasServerErrno(error, TIME_BUDGET_ERRNOS);
  }

  replicationPosition(role: 'primary' | 'replica'): string {
    if (this.name === 'mysql') return 'SELECT @@GLOBAL.gtid_executed AS pos';
    return role === 'primary' ? 'SELECT @@gtid_binlog_pos AS pos' : 'SELECT @@gtid_slave_pos AS pos';
  }

  parseReplicationPosition(text: string | null): ReplicationPosition {
    const position = new Map<string, number>();
    for (const part of (text ?? '').split(',').map((p) => p.trim())) {
      if (!part) continue;
      if (this.name === 'mariadb') {
        // domain-server-sequence: one per replication domain
        const [domain, , seq] = part.split('-');
        position.set(domain, Math.max(position.get(domain) ?? 0, Number(seq)));
      } else {
        // source_uuid:1-100:105-110 (intervals of applied transactions)
        const [uuid, ...intervals] = part.split(':');
        const ends = intervals.map((i) => Number(i.split('-').pop()));
        position.set(uuid.toLowerCase(), Math.max(position.get(uuid.toLowerCase()) ?? 0, ...ends));
      }
    }
    return position;
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
