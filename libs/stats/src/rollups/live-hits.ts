import type { SqlDialect } from '@app/db/dialect';
import { HIT_TYPES } from '../definitions';
import type { Queryable } from './day-refill';

/**
 * How long `live_hits` keeps a hit: those stamped less than an hour before the importer's clock
 * (and any stamped later). Realtime reads its 5-minute window from them, so the window is whole
 * as long as the clocks of the importing and the answering process differ by less than 55
 * minutes (docs/decisions/analytics.md).
 */
export const LIVE_HITS_KEPT_MS = 60 * 60 * 1000;

/** The oldest ts `live_hits` keeps at `now`. */
export function liveHitsCutoff(now: Date): Date {
  return new Date(now.getTime() - LIVE_HITS_KEPT_MS);
}

/**
 * Copies the rows of `hits h` that `rows` (a condition over `h`, with its parameters) selects
 * and that are stamped from `cutoff` on into `live_hits`, each path also as its MD5 (by which
 * realtime groups pages), in one statement on the database.
 */
export async function copyToLiveHits(
  q: Queryable,
  dialect: SqlDialect,
  rows: { sql: string; parameters: readonly unknown[] },
  cutoff: Date,
): Promise<void> {
  await q.query(
    `INSERT INTO live_hits (site_id, ts, hit_id, type, visitor_id, path_hash, path)
     SELECT h.site_id, h.ts, h.hit_id, h.type, h.visitor_id, ${dialect.md5Bytes('h.path')}, h.path
     FROM hits h WHERE (${rows.sql}) AND h.ts >= ?`,
    [...rows.parameters, cutoff],
  );
}

/**
 * Deletes the rows stamped before the cutoff at `now`: each import does, before its first batch.
 * The table holds about an hour of hits, so the statement reads it whole rather than keep an
 * index by time on every row.
 */
export async function pruneLiveHits(q: Queryable, now: Date): Promise<void> {
  await q.query('DELETE FROM live_hits WHERE ts < ?', [liveHitsCutoff(now)]);
}

/**
 * Fills `live_hits` from the hits kept at `now` (the migration that creates it), a site at a
 * time through the hits' (site_id, type, ts) index.
 */
export async function fillLiveHits(q: Queryable, dialect: SqlDialect, now: Date): Promise<void> {
  const sites = (await q.query('SELECT id FROM sites ORDER BY id')) as Array<{ id: number | string }>;
  const types = HIT_TYPES.map((t) => `'${t}'`).join(', ');
  for (const { id } of sites) {
    await copyToLiveHits(
      q,
      dialect,
      { sql: `h.site_id = ? AND h.type IN (${types})`, parameters: [Number(id)] },
      liveHitsCutoff(now),
    );
  }
}
