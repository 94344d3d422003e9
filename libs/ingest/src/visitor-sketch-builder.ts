import { Sql, SqlDialect } from '@app/db';
import { SESSION_ATTRIBUTES, SessionAttribute } from '@app/stats/definitions';
import {
  DAY_MS,
  dayOf,
  HOUR_MS,
  hourOf,
  SketchGrain,
  SparseVisitorSketch,
  VisitorSketch,
} from '@app/stats/rollups/visitor-sketch';
import { sql } from 'kysely';
import { DataSource, EntityManager } from 'typeorm';
import { eachAtOnce } from './at-once';
import { withDeadlockRetry } from './retry';
import { inList, inListParts, siteBatches, siteSessionsIn, writeParts } from './rollup-writer';
import {
  addToCombinationDays,
  CombinationAdditions,
  rebuildCombinationDays,
} from './visitor-combination-sketches';

/** Queued hours read per round, and (site, UTC day) groups rebuilt per transaction. */
const QUEUE_READ = 5000;
const DAYS_PER_TRANSACTION = 50;
const QUEUE_WRITE_ROWS = 500;
const VALUE_WRITE_ROWS = 200;
/** Buckets (site, grain, hour or day) whose value sketches addToDays reads per statement. */
const BUCKETS_PER_READ = 100;
/**
 * Days rebuilt together (one read of their sessions, one of their other hours' sketches, one
 * write of each kind) hold at most this many sessions, a day with more alone: what one day of
 * the benchmark's big site holds (~110,000), so that memory stays what one such day needs.
 */
const SESSIONS_PER_SLICE = 100_000;
/** Stored sketches written per statement, by their encoded size (a dense one deflates to ~50 KB). */
const WRITE_BYTES = 4 * 1024 * 1024;

/**
 * The statement (and its parameters) that reads and locks the stored value sketches of every
 * attribute in the given buckets: a range of the primary key per bucket and attribute, whatever
 * the statistics say (`tableByPrimaryKey`). In a backfill, with statistics taken while the table
 * was nearly empty, MariaDB scanned the whole table for it, waiting on every row the other
 * writers held: 52 such reads were 16.1 of the 31.3 s of statements of a smoke-size backfill,
 * 2.56M rows examined and none sent.
 */
export function valueSketchesOfBuckets(
  d: SqlDialect,
  buckets: ReadonlyArray<{ siteId: number; grain: SketchGrain; bucket: number }>,
): [string, unknown[]] {
  const dimensions = SESSION_ATTRIBUTES.map(() => '?').join(', ');
  return [
    d.lockingRead(
      `SELECT site_id, grain, bucket, dimension, value, registers FROM ${d.tableByPrimaryKey('visitor_value_sketches')} WHERE ${buckets
        .map(() => `(site_id = ? AND dimension IN (${dimensions}) AND grain = ? AND bucket = ?)`)
        .join(' OR ')}`,
    ),
    buckets.flatMap((b) => [b.siteId, ...SESSION_ATTRIBUTES, b.grain, new Date(b.bucket)]),
  ];
}

/**
 * The statement (and its parameters) that reads and locks the stored hour and day sketches of
 * the given keys, through the primary key whatever the statistics say, as
 * valueSketchesOfBuckets reads the value sketches. In a smoke-size backfill on MariaDB's
 * defaults, with statistics taken while the table was nearly empty, three of these reads
 * scanned the table and waited 0.7 s each for rows the other writers held (BENCHMARKS.md run AP).
 */
export function sketchesOfBuckets(
  d: SqlDialect,
  keys: ReadonlyArray<readonly [siteId: number, grain: SketchGrain, bucket: Date]>,
): [string, unknown[]] {
  return [
    d.lockingRead(
      `SELECT site_id, grain, bucket, registers FROM ${d.tableByPrimaryKey('visitor_sketches')} WHERE ${d.rowsIn(['site_id', 'grain', 'bucket'], keys.length)}`,
    ),
    keys.flat(),
  ];
}

/** A session as a sketch reads it, by its site. */
type StartedSession = {
  site_id: number | string;
  visitor_id: string;
  started_at: Date;
  /** The session's attributes_hash as hex text (its combination sketch's key). */
  combination: string;
} & Record<SessionAttribute, string>;

/** One site's UTC day and its queued hours. */
interface DayGroup {
  siteId: number;
  day: number;
  hours: number[];
  /** Whether one of its hours waits in `dirty_sketch_hours` (else they only gained sessions). */
  rebuild: boolean;
}

/** The part of `group`'s day its queued hours span: [first, last). */
function spanOf(group: DayGroup): { first: Date; last: Date } {
  return { first: new Date(Math.min(...group.hours)), last: new Date(Math.max(...group.hours) + HOUR_MS) };
}

/** A derived session as the sketches read it: its visitor, start and attribute values. */
export type SketchedSession = {
  session_id: string;
  visitor_id: string;
  started_at: Date | string;
} & Record<SessionAttribute, string>;

/** What re-derived sessions change in one site's sketches (sketchChanges). */
export interface SketchChanges {
  /** UTC hours that may have lost a visitor or an attribute value: rebuilt from their sessions. */
  rebuild: number[];
  /** Sessions new to a UTC hour, as [hour, session id]: merged into its sketches as they stand. */
  added: Array<[number, string]>;
}

/**
 * What one site's re-derived sessions (their rows `before` and `after` the chunk) change in its
 * sketches. A sketch can take an id, not give one back: a session new to an hour only adds to
 * it, and to its day and its values' sketches; an hour that lost one (a session moved out by an
 * earlier hit, or whose visitor or attribute values changed) must be rebuilt from its sessions.
 * A session that only grew, in the same hour with the same visitor and values, changes nothing.
 */
export function sketchChanges(
  before: readonly SketchedSession[],
  after: readonly SketchedSession[],
): SketchChanges {
  const rebuild = new Set<number>();
  const added: Array<[number, string]> = [];
  const old = new Map(before.map((b) => [b.session_id, b]));
  for (const a of after) {
    const hour = hourOf(new Date(a.started_at));
    const b = old.get(a.session_id);
    old.delete(a.session_id);
    if (!b) {
      added.push([hour, a.session_id]);
      continue;
    }
    const was = hourOf(new Date(b.started_at));
    if (was === hour && b.visitor_id === a.visitor_id && SESSION_ATTRIBUTES.every((k) => b[k] === a[k]))
      continue;
    rebuild.add(was);
    if (was !== hour) added.push([hour, a.session_id]);
  }
  for (const b of old.values()) rebuild.add(hourOf(new Date(b.started_at)));
  // An hour rebuilt reads all its sessions: no need to add one to it as well.
  return { rebuild: [...rebuild], added: added.filter(([hour]) => !rebuild.has(hour)) };
}

/**
 * Keeps `visitor_sketches` (migration 1765200000000) equal to what the sessions table says.
 * A sketch cannot forget an id, so an hour whose sessions changed is rebuilt from the
 * sessions that start in it, and its day from the day's hours. `aggregate` queues the hours
 * in each chunk's transaction (`queue`) and rebuilds them once its sessions are derived
 * (`rebuild`): a backfill rebuilds each hour once, not once per chunk that touched it.
 * Days are rebuilt several at a time, every site's together (`rebuildDays`): an hour of traffic
 * over a thousand small sites is a thousand days of a few sessions each, and their statements
 * one day after another were most of the time it took.
 */
export class VisitorSketchBuilder {
  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {}

  /**
   * Queues, in the chunk's transaction, what its re-derived sessions change in the sketches of each
   * site (sketchChanges): the hours to rebuild in `dirty_sketch_hours`, the sessions added to an
   * hour in `dirty_sketch_sessions`; 500 rows a statement.
   */
  async queue(em: EntityManager, changes: ReadonlyMap<number, SketchChanges>): Promise<void> {
    const d = this.sql.dialect;
    const rebuilt = [...changes].flatMap(([siteId, c]) => c.rebuild.map((h) => [siteId, new Date(h)]));
    for (let i = 0; i < rebuilt.length; i += QUEUE_WRITE_ROWS) {
      const part = rebuilt.slice(i, i + QUEUE_WRITE_ROWS);
      await em.query(d.insertIgnore('dirty_sketch_hours', ['site_id', 'bucket'], part.length), part.flat());
    }
    const added = [...changes].flatMap(([siteId, c]) =>
      c.added.map(([hour, sessionId]) => [siteId, new Date(hour), sessionId]),
    );
    for (let i = 0; i < added.length; i += QUEUE_WRITE_ROWS) {
      const part = added.slice(i, i + QUEUE_WRITE_ROWS);
      await em.query(
        d.insertIgnore('dirty_sketch_sessions', ['site_id', 'bucket', 'session_id'], part.length),
        part.flat(),
      );
    }
  }

  /**
   * Brings every queued hour and its day up to date: a day one of whose hours is queued in
   * `dirty_sketch_hours` is rebuilt (rebuildDays), a day whose queued hours only gained sessions
   * takes them in (addToDays). Returns how many hours it did.
   */
  async rebuild(shouldStop: () => boolean = () => false): Promise<number> {
    let rebuilt = 0;
    while (!shouldStop()) {
      const queued: Array<{ site_id: number | string; bucket: Date }> = await this.ds.query(
        `SELECT site_id, bucket FROM dirty_sketch_hours ORDER BY site_id, bucket LIMIT ${QUEUE_READ}`,
      );
      const grown: Array<{ site_id: number | string; bucket: Date }> = await this.ds.query(
        `SELECT DISTINCT site_id, bucket FROM dirty_sketch_sessions ORDER BY site_id, bucket LIMIT ${QUEUE_READ}`,
      );
      if (queued.length === 0 && grown.length === 0) break;
      const days = new Map<string, DayGroup>();
      const put = (q: { site_id: number | string; bucket: Date }, rebuild: boolean) => {
        const siteId = Number(q.site_id);
        const hour = new Date(q.bucket).getTime();
        const key = `${siteId}:${dayOf(hour)}`;
        const group = days.get(key) ?? { siteId, day: dayOf(hour), hours: [], rebuild: false };
        if (!group.hours.includes(hour)) group.hours.push(hour);
        group.rebuild ||= rebuild;
        days.set(key, group);
      };
      for (const q of queued) put(q, true);
      for (const q of grown) put(q, false);
      // Transactions of up to DAYS_PER_TRANSACTION days, `writers` at once (their rows are
      // apart: each (site, day) is in one of them): as many as there are writers where few days wait.
      const groups = [...days.values()];
      const writers = this.sql.dialect.writers;
      const size = Math.min(DAYS_PER_TRANSACTION, Math.ceil(groups.length / writers));
      const parts = Array.from({ length: Math.ceil(groups.length / size) }, (_, i) =>
        groups.slice(i * size, (i + 1) * size),
      );
      await eachAtOnce(parts, writers, async (part) => {
        if (shouldStop()) return;
        await withDeadlockRetry(() =>
          this.ds.transaction(this.sql.dialect.writeIsolation, async (em) => {
            for (const slice of await this.slices(em, part)) {
              const whole = slice.filter((g) => g.rebuild);
              const grownOnly = slice.filter((g) => !g.rebuild);
              if (whole.length > 0) await this.rebuildDays(em, whole);
              if (grownOnly.length > 0) await this.addToDays(em, grownOnly);
              await rebuildCombinationDays(em, this.sql.dialect, whole);
            }
          }),
        );
        rebuilt += part.reduce((n, g) => n + g.hours.length, 0);
      });
    }
    return rebuilt;
  }

  /** `groups` in consecutive slices of at most SESSIONS_PER_SLICE sessions in their hours. */
  private async slices(em: EntityManager, groups: readonly DayGroup[]): Promise<DayGroup[][]> {
    const d = this.sql.dialect;
    const counts = groups.map((g, i) => {
      const { first, last } = spanOf(g);
      return sql`(SELECT COUNT(*) FROM ${sql.raw(d.tableWithIndex('sessions', 's', 'ix_sessions_site_start'))}
        WHERE s.site_id = ${g.siteId} AND s.started_at >= ${first} AND s.started_at < ${last}) AS ${sql.ref(`n${i}`)}`;
    });
    const query = d.renderIndexHints(sql`SELECT ${sql.join(counts)}`.compile(d.builder));
    const [row]: Array<Record<string, number | string>> = await em.query(query.sql, [...query.parameters]);
    const slices: DayGroup[][] = [];
    let slice: DayGroup[] = [];
    let sessions = 0;
    groups.forEach((g, i) => {
      const n = Number(row[`n${i}`]);
      if (slice.length > 0 && sessions + n > SESSIONS_PER_SLICE) {
        slices.push(slice);
        slice = [];
        sessions = 0;
      }
      slice.push(g);
      sessions += n;
    });
    if (slice.length > 0) slices.push(slice);
    return slices;
  }

  /**
   * The queued hours of each (site, UTC day) of `groups` from their sessions, then each day from
   * its hours (the rebuilt ones in hand, the others from the table); and the same for each
   * attribute value of those sessions (visitor_value_sketches). Every group's rows are read in
   * one statement of each kind and written in a few.
   */
  private async rebuildDays(em: EntityManager, groups: readonly DayGroup[]): Promise<void> {
    const d = this.sql.dialect;
    const byKey = new Map(groups.map((g) => [`${g.siteId}:${g.day}`, g]));
    const built = new Map(
      groups.map((g) => [
        g,
        {
          hours: new Map(g.hours.map((h) => [h, new SparseVisitorSketch()])),
          whole: new SparseVisitorSketch(),
          values: new ValueSketches(),
        },
      ]),
    );
    const of = (siteId: number, at: number) => {
      const group = byKey.get(`${siteId}:${dayOf(at)}`);
      return group && built.get(group);
    };
    await this.unqueueAdded(em, groups);
    const sessions = await this.sessionsStartingIn(em, groups);
    for (const s of sessions) {
      const at = hourOf(new Date(s.started_at));
      const day = dayOf(at);
      const group = of(Number(s.site_id), at);
      const hour = group?.hours.get(at);
      if (!group || !hour) continue;
      // Hashed once, into its hour and its day, and its values' hours and days.
      const position = VisitorSketch.position(s.visitor_id);
      hour.set(position);
      group.whole.set(position);
      group.values.add(s, at, day, position);
    }
    const dayBounds = (g: DayGroup) => [g.siteId, new Date(g.day), new Date(g.day + DAY_MS)];
    const others: Array<{ site_id: number | string; bucket: Date; registers: Buffer }> = await em.query(
      `SELECT site_id, bucket, registers FROM visitor_sketches WHERE grain = 'hour' AND (${groups
        .map(() => '(site_id = ? AND bucket >= ? AND bucket < ?)')
        .join(' OR ')})`,
      groups.flatMap(dayBounds),
    );
    for (const row of others) {
      const at = new Date(row.bucket).getTime();
      const group = of(Number(row.site_id), at);
      if (group && !group.hours.has(at)) group.whole.mergeStored(row.registers);
    }
    const partDays = groups.filter((g) => g.hours.length < 24);
    if (partDays.length > 0) {
      const dimensions = SESSION_ATTRIBUTES.map(() => '?').join(', ');
      const otherValues: Array<{
        site_id: number | string;
        bucket: Date;
        dimension: SessionAttribute;
        value: string;
        registers: Buffer;
      }> = await em.query(
        `SELECT site_id, bucket, dimension, value, registers FROM ${d.tableByPrimaryKey('visitor_value_sketches')} WHERE ${partDays
          .map(
            () =>
              `(site_id = ? AND dimension IN (${dimensions}) AND grain = 'hour' AND bucket >= ? AND bucket < ?)`,
          )
          .join(' OR ')}`,
        partDays.flatMap((g) => [g.siteId, ...SESSION_ATTRIBUTES, new Date(g.day), new Date(g.day + DAY_MS)]),
      );
      for (const row of otherValues) {
        const at = new Date(row.bucket).getTime();
        const group = of(Number(row.site_id), at);
        if (group && !group.hours.has(at)) {
          group.values.of('day', dayOf(at), row.dimension, row.value).mergeStored(row.registers);
        }
      }
    }
    await this.store(
      em,
      groups.flatMap((g) => {
        const { hours, whole } = built.get(g)!;
        return [
          ...[...hours].map(([hour, sketch]) => ({
            siteId: g.siteId,
            grain: 'hour' as const,
            bucket: hour,
            sketch,
          })),
          { siteId: g.siteId, grain: 'day' as const, bucket: g.day, sketch: whole },
        ];
      }),
    );
    await this.storeValues(
      em,
      groups.map((g) => ({ group: g, values: built.get(g)!.values })),
    );
    // One statement per day: with every day's rows in one (OR-ed, row by row or by site), MariaDB
    // scanned the small queue table instead, and waited at each row that another writer had
    // deleted until that writer committed (0.6-0.9 s a statement for an hour of the benchmark).
    for (const g of groups) {
      await em.query(
        `${d.deleteByPrimaryKey('dirty_sketch_hours')} WHERE site_id = ? AND bucket IN (${g.hours.map(() => '?').join(',')})`,
        [g.siteId, ...g.hours.map((h) => new Date(h))],
      );
    }
  }

  /**
   * The sessions that start in the queued hours of `groups` (their visitor, start and values),
   * and sessions of other hours of their spans, which the caller skips.
   */
  private async sessionsStartingIn(
    em: EntityManager,
    groups: readonly DayGroup[],
  ): Promise<StartedSession[]> {
    if (groups.length === 0) return [];
    const d = this.sql.dialect;
    // The hours' session ids first, from ix_sessions_site_start alone, then their rows by key:
    // asked for the rows at once, MariaDB 10.11 reads the index by site_id only (ref, with the
    // hours as a filter) whenever its estimate of the range is as large as that of the site, so
    // a day's sketches read every session of the site (313,698 index entries at 1M for 22,470).
    const hoursSessions = d.materialized(
      sql.join(
        groups.map((g) => {
          const { first, last } = spanOf(g);
          return sql`SELECT site_id, session_id FROM sessions WHERE site_id = ${g.siteId} AND started_at >= ${first} AND started_at < ${last}`;
        }),
        sql` UNION ALL `,
      ),
    );
    const read =
      sql<unknown>`SELECT s.site_id, s.visitor_id, s.started_at, HEX(s.attributes_hash) AS combination, ${sql.join(
        SESSION_ATTRIBUTES.map((a) => sql.ref(`s.${a}`)),
      )} FROM (${hoursSessions}) k JOIN sessions s ON s.site_id = k.site_id AND s.session_id = k.session_id`.compile(
        d.builder,
      );
    return em.query(read.sql, [...read.parameters]);
  }

  /**
   * Removes the queued additions of the hours of `groups`, before their sessions are read: these
   * hours are built from all their sessions. Deleted first, so that one queued after the delete
   * (a chunk of another `aggregate` committing meanwhile) stays queued for the next round.
   */
  private async unqueueAdded(em: EntityManager, groups: readonly DayGroup[]): Promise<void> {
    for (const g of groups) {
      await em.query(
        `${this.sql.dialect.deleteByPrimaryKey('dirty_sketch_sessions')} WHERE site_id = ? AND bucket IN (${g.hours.map(() => '?').join(',')})`,
        [g.siteId, ...g.hours.map((h) => new Date(h))],
      );
    }
  }

  /**
   * The days of `groups`, whose queued hours only gained sessions since their sketches were
   * built: an hour with a stored sketch takes the visitors of the sessions added to it, one
   * without is built from its sessions (a new hour, as in a backfill), and the day's sketch and
   * its values' sketches take the same visitors. A register is the maximum over its ids, so
   * this gives the bytes a rebuild would, without reading the other sessions of those hours or
   * the day's other hours.
   */
  private async addToDays(em: EntityManager, groups: readonly DayGroup[]): Promise<void> {
    const d = this.sql.dialect;
    const sketchKey = (siteId: number, grain: SketchGrain, bucket: number) => `${siteId}:${grain}:${bucket}`;
    // The stored sketches of these hours and days, locked until the commit: two runs of
    // `aggregate` adding to the same sketch take turns.
    const keys = groups.flatMap((g): Array<[number, SketchGrain, Date]> => [
      ...g.hours.map((h): [number, SketchGrain, Date] => [g.siteId, 'hour', new Date(h)]),
      [g.siteId, 'day', new Date(g.day)],
    ]);
    const stored = new Map<string, Buffer>();
    for (let i = 0; i < keys.length; i += QUEUE_WRITE_ROWS) {
      const part = keys.slice(i, i + QUEUE_WRITE_ROWS);
      const rows: Array<{ site_id: number | string; grain: SketchGrain; bucket: Date; registers: Buffer }> =
        await em.query(...sketchesOfBuckets(d, part));
      for (const r of rows)
        stored.set(sketchKey(Number(r.site_id), r.grain, new Date(r.bucket).getTime()), r.registers);
    }
    // Hours without a sketch are built from their sessions; the others from their additions.
    const fresh: DayGroup[] = [];
    const kept: DayGroup[] = [];
    for (const g of groups) {
      const hours = g.hours.filter((h) => !stored.has(sketchKey(g.siteId, 'hour', h)));
      if (hours.length > 0) fresh.push({ ...g, hours });
      const others = g.hours.filter((h) => stored.has(sketchKey(g.siteId, 'hour', h)));
      if (others.length > 0) kept.push({ ...g, hours: others });
    }
    await this.unqueueAdded(em, fresh);
    // Concatenated, not pushed as arguments: a round may add hundreds of thousands of sessions.
    const sessions = (await this.sessionsStartingIn(em, fresh)).concat(await this.takeAdded(em, kept));

    // The visitors to add, hashed once each, by hour; an hour's value sketches anew where the
    // hour is new, else only those of the values its sessions have.
    const byKey = new Map(groups.map((g) => [`${g.siteId}:${g.day}`, g]));
    const freshHours = new Set(fresh.flatMap((g) => g.hours.map((h) => sketchKey(g.siteId, 'hour', h))));
    const queuedHours = new Set(groups.flatMap((g) => g.hours.map((h) => sketchKey(g.siteId, 'hour', h))));
    const sketches = new Map<
      string,
      { siteId: number; grain: SketchGrain; bucket: number; sketch: SparseVisitorSketch }
    >();
    const sketchOf = (siteId: number, grain: SketchGrain, bucket: number) => {
      const k = sketchKey(siteId, grain, bucket);
      let entry = sketches.get(k);
      if (!entry) {
        entry = { siteId, grain, bucket, sketch: new SparseVisitorSketch() };
        const before = stored.get(k);
        if (before) entry.sketch.mergeStored(before);
        sketches.set(k, entry);
      }
      return entry.sketch;
    };
    const values = new Map<DayGroup, ValueSketches>();
    const combinations = new CombinationAdditions();
    for (const s of sessions) {
      const siteId = Number(s.site_id);
      const at = hourOf(new Date(s.started_at));
      const group = byKey.get(`${siteId}:${dayOf(at)}`);
      // A session moved to another hour since it was queued: that hour has its own entry.
      if (!group || !queuedHours.has(sketchKey(siteId, 'hour', at))) continue;
      const position = VisitorSketch.position(s.visitor_id);
      sketchOf(siteId, 'hour', at).set(position);
      sketchOf(siteId, 'day', group.day).set(position);
      let v = values.get(group);
      if (!v) values.set(group, (v = new ValueSketches()));
      v.add(s, at, group.day, position);
      combinations.add(siteId, group.day, s.combination, position);
    }
    await addToCombinationDays(em, d, combinations);
    await this.store(em, [...sketches.values()]);
    await this.addToValues(
      em,
      [...values].map(([group, v]) => ({ siteId: group.siteId, rows: v.rows() })),
      (siteId, hour) => freshHours.has(sketchKey(siteId, 'hour', hour)),
    );
  }

  /**
   * The sessions queued as added to the hours of `groups`, their queue entries locked, read and
   * deleted by key (an entry queued meanwhile stays for the next round).
   */
  private async takeAdded(em: EntityManager, groups: readonly DayGroup[]): Promise<StartedSession[]> {
    if (groups.length === 0) return [];
    const d = this.sql.dialect;
    const queued: Array<{ site_id: number | string; bucket: Date; session_id: string }> = await em.query(
      d.lockingRead(
        `SELECT site_id, bucket, session_id FROM dirty_sketch_sessions WHERE ${groups
          .map((g) => `(site_id = ? AND bucket IN (${g.hours.map(() => '?').join(',')}))`)
          .join(' OR ')}`,
      ),
      groups.flatMap((g) => [g.siteId, ...g.hours.map((h) => new Date(h))]),
    );
    const bySite = new Map<number, string[]>();
    for (const q of queued) {
      const siteId = Number(q.site_id);
      const list = bySite.get(siteId);
      if (list) list.push(q.session_id);
      else bySite.set(siteId, [q.session_id]);
    }
    const sessions: StartedSession[] = [];
    for (const batch of siteBatches([...bySite])) {
      const where = siteSessionsIn(d, batch);
      const rows: StartedSession[] = await em.query(
        `SELECT site_id, visitor_id, started_at, HEX(attributes_hash) AS combination, ${SESSION_ATTRIBUTES.join(', ')} FROM sessions WHERE ${where.sql}`,
        where.parameters,
      );
      for (const row of rows) sessions.push(row);
    }
    const byHour = new Map<string, { siteId: number; bucket: Date; ids: string[] }>();
    for (const q of queued) {
      const k = `${Number(q.site_id)}:${new Date(q.bucket).getTime()}`;
      const entry = byHour.get(k) ?? { siteId: Number(q.site_id), bucket: new Date(q.bucket), ids: [] };
      entry.ids.push(q.session_id);
      byHour.set(k, entry);
    }
    for (const { siteId, bucket, ids } of byHour.values()) {
      for (const part of inListParts(ids)) {
        await em.query(
          `${d.deleteByPrimaryKey('dirty_sketch_sessions')} WHERE site_id = ? AND bucket = ? AND session_id IN (${inList(part.length)})`,
          [siteId, bucket, ...part],
        );
      }
    }
    return sessions;
  }

  /**
   * Merges value sketches into the stored ones of their site, grain, bucket, attribute and
   * value (locked until the commit), and writes them. An hour that `isNew` says had no sketch
   * gets its values' sketches anew, the stored ones of its values (none, but for a run stopped
   * between the two writes) replaced.
   */
  private async addToValues(
    em: EntityManager,
    sites: ReadonlyArray<{ siteId: number; rows: ValueSketch[] }>,
    isNew: (siteId: number, hour: number) => boolean,
  ): Promise<void> {
    const d = this.sql.dialect;
    const rows = sites.flatMap(({ siteId, rows }) => rows.map((r) => ({ siteId, ...r })));
    const merged = rows.filter((r) => r.grain === 'day' || !isNew(r.siteId, r.bucket));
    // The stored sketches of the buckets the merged values are in, every attribute's: a range
    // per bucket. One range per attribute with a list of its values read fewer rows, but took
    // 2.5 times as long for the same sketches (the planner's time over ~500 ranges at 10M).
    const buckets = new Map<string, { siteId: number; grain: SketchGrain; bucket: number }>();
    for (const r of merged) {
      buckets.set(`${r.siteId}:${r.grain}:${r.bucket}`, {
        siteId: r.siteId,
        grain: r.grain,
        bucket: r.bucket,
      });
    }
    const stored = new Map<string, Buffer>();
    const valueKey = (siteId: number, grain: string, bucket: number, dimension: string, value: string) =>
      `${siteId}\u0000${grain}\u0000${bucket}\u0000${dimension}\u0000${value}`;
    const keys = [...buckets.values()];
    for (let i = 0; i < keys.length; i += BUCKETS_PER_READ) {
      const part = keys.slice(i, i + BUCKETS_PER_READ);
      const found: Array<{
        site_id: number | string;
        grain: SketchGrain;
        bucket: Date;
        dimension: SessionAttribute;
        value: string;
        registers: Buffer;
      }> = await em.query(...valueSketchesOfBuckets(d, part));
      for (const r of found) {
        stored.set(
          valueKey(Number(r.site_id), r.grain, new Date(r.bucket).getTime(), r.dimension, r.value),
          r.registers,
        );
      }
    }
    // New hours: whatever their values had (nothing but after a stopped run) goes first.
    const newHours = [
      ...new Set(
        rows
          .filter((r) => r.grain === 'hour' && isNew(r.siteId, r.bucket))
          .map((r) => `${r.siteId}:${r.bucket}`),
      ),
    ];
    if (newHours.length > 0) {
      const dimensions = SESSION_ATTRIBUTES.map(() => '?').join(', ');
      for (let i = 0; i < newHours.length; i += QUEUE_WRITE_ROWS) {
        const part = newHours.slice(i, i + QUEUE_WRITE_ROWS).map((k) => k.split(':').map(Number));
        await em.query(
          `${d.deleteByPrimaryKey('visitor_value_sketches')} WHERE ${part
            .map(() => `(site_id = ? AND dimension IN (${dimensions}) AND grain = 'hour' AND bucket = ?)`)
            .join(' OR ')}`,
          part.flatMap(([siteId, hour]) => [siteId, ...SESSION_ATTRIBUTES, new Date(hour)]),
        );
      }
    }
    const written = rows.map((r) => {
      const before = stored.get(valueKey(r.siteId, r.grain, r.bucket, r.dimension, r.value));
      if (before) r.sketch.mergeStored(before);
      return { ...r, registers: r.sketch.encode() };
    });
    for (const part of writeParts(written, VALUE_WRITE_ROWS, WRITE_BYTES, (r) => r.registers.length)) {
      await em.query(
        `${d.replaceInto('visitor_value_sketches', ['site_id', 'dimension', 'grain', 'bucket', 'value', 'registers'])} VALUES ${part
          .map(() => '(?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        part.flatMap((r) => [r.siteId, r.dimension, r.grain, new Date(r.bucket), r.value, r.registers]),
      );
    }
  }

  /** Replaces the value sketches of the rebuilt hours and of their days. */
  private async storeValues(
    em: EntityManager,
    days: ReadonlyArray<{ group: DayGroup; values: ValueSketches }>,
  ): Promise<void> {
    // Through the primary key whatever the statistics say: in a backfill, with statistics taken
    // while the table was nearly empty, MariaDB read this as a scan of the whole table (227,501
    // rows examined and ~1 s to delete a few small sites' rows; 37 such statements, 40.3 s, in
    // one backfill at 1M, and 1 in another).
    const dimensions = SESSION_ATTRIBUTES.map(() => '?').join(', ');
    await em.query(
      `${this.sql.dialect.deleteByPrimaryKey('visitor_value_sketches')} WHERE ${days
        .map(
          ({ group }) =>
            `(site_id = ? AND dimension IN (${dimensions}) AND ((grain = 'hour' AND bucket IN (${group.hours
              .map(() => '?')
              .join(', ')})) OR (grain = 'day' AND bucket = ?)))`,
        )
        .join(' OR ')}`,
      days.flatMap(({ group }) => [
        group.siteId,
        ...SESSION_ATTRIBUTES,
        ...group.hours.map((h) => new Date(h)),
        new Date(group.day),
      ]),
    );
    const rows = days.flatMap(({ group, values }) =>
      values.rows().map((r) => ({ siteId: group.siteId, ...r, registers: r.sketch.encode() })),
    );
    for (const part of writeParts(rows, VALUE_WRITE_ROWS, WRITE_BYTES, (r) => r.registers.length)) {
      await em.query(
        `INSERT INTO visitor_value_sketches (site_id, dimension, grain, bucket, value, registers) VALUES ${part
          .map(() => '(?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        part.flatMap((r) => [r.siteId, r.dimension, r.grain, new Date(r.bucket), r.value, r.registers]),
      );
    }
  }

  /** Writes the sketches, and removes those left with no session in their hour or day. */
  private async store(
    em: EntityManager,
    sketches: ReadonlyArray<{
      siteId: number;
      grain: 'hour' | 'day';
      bucket: number;
      sketch: SparseVisitorSketch;
    }>,
  ): Promise<void> {
    const d = this.sql.dialect;
    const empty = sketches.filter((s) => s.sketch.isEmpty());
    if (empty.length > 0) {
      await em.query(
        `DELETE FROM visitor_sketches WHERE ${d.rowsIn(['site_id', 'grain', 'bucket'], empty.length)}`,
        empty.flatMap((s) => [s.siteId, s.grain, new Date(s.bucket)]),
      );
    }
    const kept = sketches
      .filter((s) => !s.sketch.isEmpty())
      .map((s) => ({ ...s, registers: s.sketch.encode() }));
    for (const part of writeParts(kept, QUEUE_WRITE_ROWS, WRITE_BYTES, (s) => s.registers.length)) {
      await em.query(
        `${d.replaceInto('visitor_sketches', ['site_id', 'grain', 'bucket', 'registers'])} VALUES ${part
          .map(() => '(?, ?, ?, ?)')
          .join(', ')}`,
        part.flatMap((s) => [s.siteId, s.grain, new Date(s.bucket), s.registers]),
      );
    }
  }
}

interface ValueSketch {
  grain: SketchGrain;
  bucket: number;
  dimension: SessionAttribute;
  value: string;
  sketch: SparseVisitorSketch;
}

/**
 * The sketches of one site's day by grain, bucket, attribute and value. Nested maps, not one
 * map by a composed key: a day of the benchmark's big site looks up ~2.4M of them (every
 * session, 5 attributes, its hour and its day), and composing the keys was a quarter of the
 * time the sketches took (a CPU profile of one more hour at 10M: 775 of ~2,900 ms).
 */
class ValueSketches {
  private readonly byBucket = new Map<
    SketchGrain,
    Map<number, Map<SessionAttribute, Map<string, ValueSketch>>>
  >();

  /** The sketches of one bucket by attribute and value; `of` then adds a value's. */
  bucket(grain: SketchGrain, bucket: number): Map<SessionAttribute, Map<string, ValueSketch>> {
    let buckets = this.byBucket.get(grain);
    if (!buckets)
      this.byBucket.set(
        grain,
        (buckets = new Map<number, Map<SessionAttribute, Map<string, ValueSketch>>>()),
      );
    let dimensions = buckets.get(bucket);
    if (!dimensions)
      buckets.set(bucket, (dimensions = new Map<SessionAttribute, Map<string, ValueSketch>>()));
    return dimensions;
  }

  of(
    grain: SketchGrain,
    bucket: number,
    dimension: SessionAttribute,
    value: string,
    dimensions = this.bucket(grain, bucket),
  ): SparseVisitorSketch {
    let values = dimensions.get(dimension);
    if (!values) dimensions.set(dimension, (values = new Map<string, ValueSketch>()));
    let entry = values.get(value);
    if (!entry)
      values.set(value, (entry = { grain, bucket, dimension, value, sketch: new SparseVisitorSketch() }));
    return entry.sketch;
  }

  /** A session's visitor (its `VisitorSketch.position`) into its values' sketches of its hour and day. */
  add(session: Record<SessionAttribute, string>, hour: number, day: number, position: number): void {
    const hourValues = this.bucket('hour', hour);
    const dayValues = this.bucket('day', day);
    for (const dimension of SESSION_ATTRIBUTES) {
      this.of('hour', hour, dimension, session[dimension], hourValues).set(position);
      this.of('day', day, dimension, session[dimension], dayValues).set(position);
    }
  }

  rows(): ValueSketch[] {
    return [...this.byBucket.values()].flatMap((buckets) =>
      [...buckets.values()].flatMap((dimensions) =>
        [...dimensions.values()].flatMap((values) => [...values.values()]),
      ),
    );
  }
}
