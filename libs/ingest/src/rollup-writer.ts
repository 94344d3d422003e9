import type { SqlDialect } from '@app/db';
import { siteKeysWhere } from '@app/stats/sql/site-keys';
import type { EntityManager } from 'typeorm';

/** `?,?,…`: the placeholders of an IN list of `n` values. */
export const inList = (n: number) => Array(n).fill('?').join(',');

/**
 * The most values `aggregate` and `import` put in one IN list. From 1,000 values on
 * (`in_predicate_conversion_threshold`), MariaDB turns an IN list into a subquery over a table
 * of values, which it plans differently from a list of keys (a semi-join, chosen by
 * statistics); under 1,000 the lists stay key lookups.
 */
export const MAX_IN_LIST = 900;

/** `values` cut into lists of at most MAX_IN_LIST, of nearly equal length. */
export function inListParts<T>(values: readonly T[]): T[][] {
  const parts = Math.ceil(values.length / MAX_IN_LIST);
  const size = Math.ceil(values.length / Math.max(parts, 1));
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/**
 * The values of `rows`, row after row: the parameters of a multi-row statement. A loop, not
 * rows.flat(): a statement holds thousands of values, on the thread that also reads the input.
 */
export function flatRows(rows: readonly (readonly unknown[])[]): unknown[] {
  const params: unknown[] = [];
  for (const row of rows) for (const value of row) params.push(value);
  return params;
}

/** Rows per upsert or delete statement of a rollup write. */
export const ROLLUP_WRITE_ROWS = 500;

/** How one rollup table is written: its columns and how a delta fills them. */
export interface RollupTable<R> {
  table: string;
  /** The key columns after site_id, then columns stored beside the key (never summed). */
  keys: readonly string[];
  sums: readonly string[];
  /** The columns (after site_id) that identify a row: the first `identity.length` of keyValues. */
  identity: readonly string[];
  keyValues: (r: R) => unknown[];
  sumValues: (r: R) => unknown[];
  /** The summed column that is 0 exactly when a row holds nothing, and a delta's change of it. */
  count: { column: string; of: (r: R) => number };
}

/** The count of the session rollups: a row with no session left holds nothing. */
export const SESSIONS_COUNT = { column: 'sessions', of: (r: { sessions: number }) => r.sessions };

/** A rollup's rows waiting in a transaction's buffer: its columns, and each row's values with its site. */
interface PendingRollup {
  table: string;
  keys: readonly string[];
  sums: readonly string[];
  identity: readonly string[];
  countColumn: string;
  /** site_id, keyValues, sumValues of each delta. */
  upserts: unknown[][];
  /** site_id and identity of each delta that may have emptied its row. */
  emptied: unknown[][];
}

/** The rollup rows buffered in a transaction (withBufferedRollupWrites), by table. */
const buffers = new WeakMap<EntityManager, Map<string, PendingRollup>>();

/**
 * Runs `work` with the rollup writes of `em` (writeRollupDeltas) kept back, then writes them, every
 * site's rows of a rollup in the same statements: a transaction that derives the sessions of
 * many sites sends ~20 statements for its rollups, not ~20 per site. Nothing between reads a
 * rollup that `aggregate` writes (its deltas come from the sessions), so holding the rows back
 * until the end of the transaction changes no figure.
 */
export async function withBufferedRollupWrites<T>(
  em: EntityManager,
  d: SqlDialect,
  work: () => Promise<T>,
): Promise<T> {
  if (buffers.has(em)) throw new Error('rollup writes are already buffered in this transaction');
  const pending = new Map<string, PendingRollup>();
  buffers.set(em, pending);
  try {
    const result = await work();
    buffers.delete(em);
    for (const rollup of pending.values()) await writePending(em, d, rollup);
    return result;
  } finally {
    buffers.delete(em);
  }
}

/** Orders values of the same column: numbers, strings, dates, binary hashes; null first. */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return Buffer.compare(a, b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  // Values of one column have one type; anything else keeps its order (order is for speed only).
  return 0;
}

/** `rows` (site_id, then the identity, then the rest) sorted by site and identity. */
export function sortByIdentity(rows: unknown[][], identityColumns: number): void {
  const n = 1 + identityColumns;
  rows.sort((a, b) => {
    for (let i = 0; i < n; i++) {
      const c = compareValues(a[i], b[i]);
      if (c !== 0) return c;
    }
    return 0;
  });
}

/**
 * `rows` sorted by sortByIdentity, with the rows of one site and identity added up into the
 * first of them: the deltas of a transaction's batches (a big site's sessions come in parts of
 * MAX_IN_LIST) and of its sessions meet on the same rows, 22 % of the pair rollup's rows in the
 * benchmark's hour at 10M. Only sums that are all safe integers are added here (counts, whole
 * seconds), so the sum is exact; a row with any other sum (a decimal sent as text) stays as it
 * is and the database adds it, as before. A row whose sums add up to 0 everywhere changes
 * nothing and is dropped; a row it emptied is still deleted (`emptied`).
 */
export function mergeByIdentity(
  rows: readonly unknown[][],
  identityColumns: number,
  sumColumns: number,
): unknown[][] {
  const n = 1 + identityColumns;
  const sameIdentity = (a: readonly unknown[], b: readonly unknown[]) => {
    for (let i = 0; i < n; i++)
      if (compareValues(a[i], b[i]) !== 0 || typeof a[i] !== typeof b[i]) return false;
    return true;
  };
  const integerSums = (row: readonly unknown[]) => {
    for (let i = row.length - sumColumns; i < row.length; i++)
      if (!Number.isSafeInteger(row[i])) return false;
    return true;
  };
  const merged: unknown[][] = [];
  for (const row of rows) {
    const last = merged[merged.length - 1];
    if (last && integerSums(last) && integerSums(row) && sameIdentity(last, row)) {
      for (let i = row.length - sumColumns; i < row.length; i++)
        last[i] = (last[i] as number) + (row[i] as number);
    } else {
      merged.push([...row]);
    }
  }
  return merged.filter((row) => !integerSums(row) || row.slice(row.length - sumColumns).some((v) => v !== 0));
}

async function writePending(em: EntityManager, d: SqlDialect, rollup: PendingRollup): Promise<void> {
  const keys = ['site_id', ...rollup.keys];
  // In key order: each statement's rows then fall on neighbouring pages of the primary key,
  // and two transactions writing one rollup lock its rows in the same order.
  sortByIdentity(rollup.upserts, rollup.identity.length);
  const upserts = mergeByIdentity(rollup.upserts, rollup.identity.length, rollup.sums.length);
  for (let i = 0; i < upserts.length; i += ROLLUP_WRITE_ROWS) {
    const part = upserts.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(
      d.upsertAdd(rollup.table, keys, rollup.sums, part.length, ['site_id', ...rollup.identity]),
      flatRows(part),
    );
  }
  for (let i = 0; i < rollup.emptied.length; i += ROLLUP_WRITE_ROWS) {
    const part = rollup.emptied.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(
      deleteEmptiedRows(d, { ...rollup, count: { column: rollup.countColumn } }, part.length),
      part.flat(),
    );
  }
}

/**
 * Adds `deltas` to a rollup of a site (insert, or add to the row with the same key), then
 * deletes the rows a delta emptied (those whose count fell to 0). Every rollup that
 * `aggregate` keeps in step with the sessions table is written through this. Inside
 * withBufferedRollupWrites the rows are written when it ends, with the other sites' rows.
 */
export async function writeRollupDeltas<R>(
  em: EntityManager,
  d: SqlDialect,
  siteId: number,
  deltas: readonly R[],
  rollup: RollupTable<R>,
): Promise<void> {
  const pending: PendingRollup = {
    table: rollup.table,
    keys: rollup.keys,
    sums: rollup.sums,
    identity: rollup.identity,
    countColumn: rollup.count.column,
    upserts: deltas.map((r) => [siteId, ...rollup.keyValues(r), ...rollup.sumValues(r)]),
    emptied: deltas
      .filter((r) => rollup.count.of(r) < 0)
      .map((r) => [siteId, ...rollup.keyValues(r).slice(0, rollup.identity.length)]),
  };
  const buffer = buffers.get(em);
  if (!buffer) return writePending(em, d, pending);
  const held = buffer.get(rollup.table);
  if (!held) buffer.set(rollup.table, pending);
  else {
    if (
      held.keys.join() !== pending.keys.join() ||
      held.sums.join() !== pending.sums.join() ||
      held.identity.join() !== pending.identity.join()
    )
      throw new Error(`two shapes of rows for ${rollup.table}`);
    // One at a time: a spread of a large chunk's rows would be as many call arguments.
    for (const row of pending.upserts) held.upserts.push(row);
    for (const row of pending.emptied) held.emptied.push(row);
  }
}

/**
 * The DELETE of the rows that `rows` deltas may have emptied, of any sites: each row's site id,
 * then its identity. Each listed row is read by the primary key, never a site's whole table.
 */
export function deleteEmptiedRows(
  d: SqlDialect,
  rollup: Pick<RollupTable<never>, 'table' | 'identity'> & { count: { column: string } },
  rows: number,
): string {
  return `DELETE FROM ${rollup.table} WHERE ${rollup.count.column} = 0 AND ${d.rowsIn(['site_id', ...rollup.identity], rows)}`;
}

/** Queued sessions by site: what one statement of `aggregate` reads or writes for several sites. */
export type SiteSessions = ReadonlyMap<number, readonly string[]>;

/**
 * siteKeysWhere (`(site_id = ? AND session_id IN (…)) OR …`, one index range per site) as SQL
 * text and parameters: an hour of traffic over a thousand small sites is then ~30 statements a
 * transaction, not ~30 a site. `column`: another key than the session's (the visitor's).
 */
export function siteSessionsIn(
  d: SqlDialect,
  sites: SiteSessions,
  column = 'session_id',
): { sql: string; parameters: unknown[] } {
  const compiled = siteKeysWhere(sites, undefined, column).compile(d.builder);
  return { sql: compiled.sql, parameters: [...compiled.parameters] };
}

/**
 * A writer group's sites (site → queued session ids) in batches derived together: each site's
 * sessions in parts whose IN lists MariaDB reads by key (inListParts), and parts of different
 * sites together up to MAX_IN_LIST sessions, so that a hundred sites with a few sessions each
 * are one batch. A site is never twice in a batch.
 */
export function* siteBatches(
  group: ReadonlyArray<readonly [number, readonly string[]]>,
): Generator<SiteSessions> {
  let batch = new Map<number, readonly string[]>();
  let size = 0;
  for (const [siteId, sessionIds] of group) {
    for (const part of inListParts(sessionIds)) {
      if (batch.size > 0 && (size + part.length > MAX_IN_LIST || batch.has(siteId))) {
        yield batch;
        batch = new Map();
        size = 0;
      }
      batch.set(siteId, part);
      size += part.length;
    }
  }
  if (batch.size > 0) yield batch;
}

/**
 * One site's share of the sessions a transaction of `aggregate` derives in one pass: their ids,
 * their derived rows before and after, and the site's local day (the day rollups' bucket).
 */
export interface SitePart<S> {
  siteId: number;
  sessionIds: readonly string[];
  before: S[];
  after: S[];
  dayOf: (instant: Date) => Date;
}

/** The sessions of `parts` by site. */
export const sessionsOf = (
  parts: ReadonlyArray<Pick<SitePart<unknown>, 'siteId' | 'sessionIds'>>,
): SiteSessions => new Map(parts.filter((p) => p.sessionIds.length > 0).map((p) => [p.siteId, p.sessionIds]));

/** `rows` by their `site_id` (as a number), in the order they came. */
export function rowsBySite<T extends { site_id: number | string }>(rows: readonly T[]): Map<number, T[]> {
  const bySite = new Map<number, T[]>();
  for (const row of rows) {
    const siteId = Number(row.site_id);
    const list = bySite.get(siteId);
    if (list) list.push(row);
    else bySite.set(siteId, [row]);
  }
  return bySite;
}

/**
 * Replaces what a per-session table (session_goals, session_event_buckets,
 * session_pageview_buckets, …) holds for the sessions of `sites` with `rows` (site_id, then
 * their columns in `columns` order). The delete reads only `hadRows`: the sites some of whose
 * sessions had rows before (none: no delete).
 */
export async function replaceSessionRows(
  em: EntityManager,
  d: SqlDialect,
  hadRows: SiteSessions,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  if (hadRows.size > 0) {
    const where = siteSessionsIn(d, hadRows);
    await em.query(`DELETE FROM ${table} WHERE ${where.sql}`, where.parameters);
  }
  for (let i = 0; i < rows.length; i += ROLLUP_WRITE_ROWS) {
    const part = rows.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(d.insertIgnore(table, ['site_id', ...columns], part.length), part.flat());
  }
}

/** `rows` in consecutive parts of at most `maxRows` rows and (but for a row alone) `maxBytes` bytes. */
export function* writeParts<T>(
  rows: readonly T[],
  maxRows: number,
  maxBytes: number,
  bytes: (row: T) => number,
) {
  let part: T[] = [];
  let size = 0;
  for (const row of rows) {
    const n = bytes(row);
    if (part.length > 0 && (part.length === maxRows || size + n > maxBytes)) {
      yield part;
      part = [];
      size = 0;
    }
    part.push(row);
    size += n;
  }
  if (part.length > 0) yield part;
}
