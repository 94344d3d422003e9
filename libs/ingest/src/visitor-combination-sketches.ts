import { SqlDialect } from '@app/db';
import { COMBINATION_SKETCHES_BY_DAY } from '@app/stats/definitions';
import { DAY_MS, dayOf, SparseVisitorSketch, VisitorSketch } from '@app/stats/rollups/visitor-sketch';
import { sql } from 'kysely';
import { EntityManager } from 'typeorm';
import { writeParts } from './rollup-writer';

/** Rows written per statement, and their encoded sketches' bytes at most (most are a few bytes). */
const WRITE_ROWS = 500;
/** Stored sketches read (and locked) per statement by key. */
const READ_ROWS = 500;
const WRITE_BYTES = 4 * 1024 * 1024;

/** A (site, UTC day) whose sketches VisitorSketchBuilder brings up to date. */
export interface SketchDay {
  siteId: number;
  /** The UTC day's start, in ms. */
  day: number;
}

/**
 * Replaces the visitor sketches by combination of attributes (visitor_combination_sketches,
 * migration 1767900000000) of each of `days`: one per combination of the sessions that start in
 * that UTC day, of their visitors, from all those sessions. VisitorSketchBuilder calls it for the
 * days one of whose hours it rebuilds (a session left it, or changed its visitor or values), and
 * addToCombinationDays for the days whose hours only gained sessions, in the transaction that
 * takes those hours off its queues: a day's combination sketches are current whenever none of
 * its hours is queued, which is what a report checks before it reads them (pendingSketchHours).
 * A day without sessions keeps none.
 */
export async function rebuildCombinationDays(
  em: EntityManager,
  d: SqlDialect,
  days: readonly SketchDay[],
): Promise<void> {
  if (days.length === 0) return;
  // The days' session ids from ix_sessions_site_start alone, then their rows by key (as the
  // builder's sessionsStartingIn, for the same reason).
  const ids = d.materialized(
    sql.join(
      days.map(
        (g) =>
          sql`SELECT site_id, session_id FROM sessions WHERE site_id = ${g.siteId} AND started_at >= ${new Date(g.day)} AND started_at < ${new Date(g.day + DAY_MS)}`,
      ),
      sql` UNION ALL `,
    ),
  );
  const read = sql`SELECT s.site_id, s.started_at, s.visitor_id, HEX(s.attributes_hash) AS k
    FROM (${ids}) i JOIN sessions s ON s.site_id = i.site_id AND s.session_id = i.session_id`.compile(
    d.builder,
  );
  const sessions: Array<{
    site_id: number | string;
    started_at: Date | string;
    visitor_id: string;
    k: string;
  }> = await em.query(read.sql, [...read.parameters]);
  const sketches = new Map<
    string,
    { siteId: number; day: number; hash: Buffer; sketch: SparseVisitorSketch }
  >();
  for (const s of sessions) {
    const siteId = Number(s.site_id);
    const day = dayOf(new Date(s.started_at).getTime());
    const key = `${siteId}\u0000${day}\u0000${s.k}`;
    let entry = sketches.get(key);
    if (!entry) {
      entry = { siteId, day, hash: Buffer.from(s.k, 'hex'), sketch: new SparseVisitorSketch() };
      sketches.set(key, entry);
    }
    entry.sketch.set(VisitorSketch.position(s.visitor_id));
  }
  await em.query(
    `${d.deleteWithIndex('visitor_combination_sketches', COMBINATION_SKETCHES_BY_DAY)} WHERE ${days.map(() => '(site_id = ? AND bucket = ?)').join(' OR ')}`,
    days.flatMap((g) => [g.siteId, new Date(g.day)]),
  );
  await writeSketches(em, [...sketches.values()]);
}

/** Visitors to add to the combination sketches of days: their hashed positions by (site, UTC day, combination). */
export class CombinationAdditions {
  readonly byKey = new Map<string, CombinationSketch>();

  add(siteId: number, day: number, hex: string, position: number): void {
    const key = `${siteId}\u0000${day}\u0000${hex.toLowerCase()}`;
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { siteId, day, hash: Buffer.from(hex, 'hex'), sketch: new SparseVisitorSketch() };
      this.byKey.set(key, entry);
    }
    entry.sketch.set(position);
  }
}

/**
 * Merges visitors into the stored combination sketches of their days (locked until the commit,
 * so two runs of `aggregate` adding to the same sketch take turns) and writes them: for the days
 * whose queued hours only gained sessions (VisitorSketchBuilder's addToDays, which passes the
 * sessions added to those hours, or all the sessions of an hour that had no sketch). A register
 * is the maximum over its ids, so this gives the bytes a rebuild from all the day's sessions would.
 */
export async function addToCombinationDays(
  em: EntityManager,
  d: SqlDialect,
  additions: CombinationAdditions,
): Promise<void> {
  const entries = [...additions.byKey.values()];
  if (entries.length === 0) return;
  const key = (siteId: number, day: number, hash: Buffer) =>
    `${siteId}\u0000${day}\u0000${hash.toString('hex')}`;
  const byKey = new Map(entries.map((e) => [key(e.siteId, e.day, e.hash), e]));
  const keyValues = (part: readonly CombinationSketch[]) =>
    part.flatMap((e) => [e.siteId, new Date(e.day), e.hash]);
  for (let i = 0; i < entries.length; i += READ_ROWS) {
    const part = entries.slice(i, i + READ_ROWS);
    const stored: Array<{
      site_id: number | string;
      bucket: Date | string;
      attributes_hash: Buffer;
      registers: Buffer;
    }> = await em.query(
      d.lockingRead(
        `SELECT site_id, bucket, attributes_hash, registers FROM ${d.tableByPrimaryKey('visitor_combination_sketches')}
           WHERE ${d.rowsIn(['site_id', 'bucket', 'attributes_hash'], part.length)}`,
      ),
      keyValues(part),
    );
    for (const r of stored) {
      byKey
        .get(key(Number(r.site_id), new Date(r.bucket).getTime(), Buffer.from(r.attributes_hash)))
        ?.sketch.mergeStored(Buffer.from(r.registers));
    }
    await em.query(
      `${d.deleteByPrimaryKey('visitor_combination_sketches')} WHERE ${d.rowsIn(['site_id', 'bucket', 'attributes_hash'], part.length)}`,
      keyValues(part),
    );
  }
  await writeSketches(em, entries);
}

interface CombinationSketch {
  siteId: number;
  day: number;
  hash: Buffer;
  sketch: SparseVisitorSketch;
}

/** Inserts sketches, WRITE_ROWS or WRITE_BYTES of them a statement. */
async function writeSketches(em: EntityManager, sketches: readonly CombinationSketch[]): Promise<void> {
  const rows = sketches.map((e) => ({ ...e, registers: e.sketch.encode() }));
  for (const part of writeParts(rows, WRITE_ROWS, WRITE_BYTES, (r) => r.registers.length)) {
    await em.query(
      `INSERT INTO visitor_combination_sketches (site_id, bucket, attributes_hash, registers) VALUES ${part
        .map(() => '(?, ?, ?, ?)')
        .join(', ')}`,
      part.flatMap((r) => [r.siteId, new Date(r.day), r.hash, r.registers]),
    );
  }
}
