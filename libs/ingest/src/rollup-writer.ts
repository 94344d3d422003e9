import type { SqlDialect } from '@app/db';
import type { EntityManager } from 'typeorm';

/** `?,?,…`: the placeholders of an IN list of `n` values. */
export const inList = (n: number) => Array(n).fill('?').join(',');

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

/**
 * Adds `deltas` to a rollup of a site (insert, or add to the row with the same key), then
 * deletes the rows a delta emptied (those whose count fell to 0). Every rollup that
 * `aggregate` keeps in step with the sessions table is written through this.
 */
export async function writeRollupDeltas<R>(
  em: EntityManager,
  d: SqlDialect,
  siteId: number,
  deltas: readonly R[],
  rollup: RollupTable<R>,
): Promise<void> {
  const keys = ['site_id', ...rollup.keys];
  for (let i = 0; i < deltas.length; i += ROLLUP_WRITE_ROWS) {
    const part = deltas.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(
      d.upsertAdd(rollup.table, keys, rollup.sums, part.length, ['site_id', ...rollup.identity]),
      part.flatMap((r) => [siteId, ...rollup.keyValues(r), ...rollup.sumValues(r)]),
    );
  }
  const emptied = deltas.filter((r) => rollup.count.of(r) < 0);
  for (let i = 0; i < emptied.length; i += ROLLUP_WRITE_ROWS) {
    const part = emptied.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(deleteEmptiedRows(d, rollup, part.length), [
      siteId,
      ...part.flatMap((r) => rollup.keyValues(r).slice(0, rollup.identity.length)),
    ]);
  }
}

/**
 * The DELETE of the rows of one site that `rows` deltas may have emptied: the site's id, then
 * each row's identity. Each listed row is read by the primary key, never the site's whole table.
 */
export function deleteEmptiedRows(
  d: SqlDialect,
  rollup: Pick<RollupTable<never>, 'table' | 'identity'> & { count: { column: string } },
  rows: number,
): string {
  return `DELETE FROM ${rollup.table} WHERE site_id = ? AND ${rollup.count.column} = 0 AND ${d.rowsIn(rollup.identity, rows)}`;
}

/**
 * Replaces what a per-session table (session_goals, session_event_buckets,
 * session_pageview_buckets) holds for the chunk's `sessionIds` with `rows` (their columns after
 * site_id, in `columns` order). `hadRows`: whether any of those sessions had rows before; the
 * delete is skipped when none had.
 */
export async function replaceSessionRows(
  em: EntityManager,
  d: SqlDialect,
  siteId: number,
  sessionIds: readonly string[],
  hadRows: boolean,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  if (hadRows) {
    await em.query(
      `DELETE FROM ${table} WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
      [siteId, ...sessionIds],
    );
  }
  for (let i = 0; i < rows.length; i += ROLLUP_WRITE_ROWS) {
    const part = rows.slice(i, i + ROLLUP_WRITE_ROWS);
    await em.query(
      d.insertIgnore(table, ['site_id', ...columns], part.length),
      part.flatMap((r) => [siteId, ...r]),
    );
  }
}
