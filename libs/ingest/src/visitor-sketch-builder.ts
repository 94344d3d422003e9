import { Sql } from '@app/db';
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

/** Queued hours read per round, and (site, UTC day) groups rebuilt per transaction. */
const QUEUE_READ = 5000;
const DAYS_PER_TRANSACTION = 50;
const QUEUE_WRITE_ROWS = 500;
const VALUE_WRITE_ROWS = 200;

/**
 * Keeps `visitor_sketches` (migration 1765200000000) equal to what the sessions table says.
 * A sketch cannot forget an id, so an hour whose sessions changed is rebuilt from the
 * sessions that start in it, and its day from the day's hours. `aggregate` queues the hours
 * in each chunk's transaction (`queue`) and rebuilds them once its sessions are derived
 * (`rebuild`): a backfill rebuilds each hour once, not once per chunk that touched it.
 */
export class VisitorSketchBuilder {
  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {}

  /** Queues the UTC hours of these session starts (old and new) of one site. */
  async queue(em: EntityManager, siteId: number, startedAt: readonly Date[]): Promise<void> {
    const hours = [...new Set(startedAt.map((at) => hourOf(at)))];
    for (let i = 0; i < hours.length; i += QUEUE_WRITE_ROWS) {
      const part = hours.slice(i, i + QUEUE_WRITE_ROWS);
      await em.query(
        this.sql.dialect.insertIgnore('dirty_sketch_hours', ['site_id', 'bucket'], part.length),
        part.flatMap((h) => [siteId, new Date(h)]),
      );
    }
  }

  async pending(): Promise<number> {
    const rows: Array<{ n: number | string }> = await this.ds.query(
      'SELECT COUNT(*) AS n FROM dirty_sketch_hours',
    );
    return Number(rows[0].n);
  }

  /** Rebuilds every queued hour and its day; returns how many hours it rebuilt. */
  async rebuild(shouldStop: () => boolean = () => false): Promise<number> {
    let rebuilt = 0;
    while (!shouldStop()) {
      const queued: Array<{ site_id: number | string; bucket: Date }> = await this.ds.query(
        `SELECT site_id, bucket FROM dirty_sketch_hours ORDER BY site_id, bucket LIMIT ${QUEUE_READ}`,
      );
      if (queued.length === 0) break;
      const days = new Map<string, { siteId: number; day: number; hours: number[] }>();
      for (const q of queued) {
        const siteId = Number(q.site_id);
        const hour = new Date(q.bucket).getTime();
        const key = `${siteId}:${dayOf(hour)}`;
        const group = days.get(key) ?? { siteId, day: dayOf(hour), hours: [] };
        group.hours.push(hour);
        days.set(key, group);
      }
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
            for (const group of part) await this.rebuildDay(em, group.siteId, group.day, group.hours);
          }),
        );
        rebuilt += part.reduce((n, g) => n + g.hours.length, 0);
      });
    }
    return rebuilt;
  }

  /**
   * The queued `hours` of one site's UTC `day` from its sessions, then the day from its hours
   * (the rebuilt ones in hand, the others from the table), written in one statement; and the
   * same for each attribute value of those sessions (visitor_value_sketches).
   */
  private async rebuildDay(em: EntityManager, siteId: number, day: number, hours: number[]): Promise<void> {
    const first = Math.min(...hours);
    const last = Math.max(...hours) + HOUR_MS;
    const d = this.sql.dialect;
    // The hours' session ids first, from ix_sessions_site_start alone, then their rows by key:
    // asked for the rows at once, MariaDB 10.11 reads the index by site_id only (ref, with the
    // hours as a filter) whenever its estimate of the range is as large as that of the site, so
    // a day's sketches read every session of the site (313,698 index entries at 1M for 22,470).
    const hoursSessions = d.materialized(
      sql`SELECT session_id FROM sessions WHERE site_id = ${siteId} AND started_at >= ${new Date(first)} AND started_at < ${new Date(last)}`,
    );
    const read = sql<unknown>`SELECT s.visitor_id, s.started_at, ${sql.join(
      SESSION_ATTRIBUTES.map((a) => sql.ref(`s.${a}`)),
    )} FROM (${hoursSessions}) k JOIN sessions s ON s.site_id = ${siteId} AND s.session_id = k.session_id`.compile(
      d.builder,
    );
    const sessions: Array<{ visitor_id: string; started_at: Date } & Record<SessionAttribute, string>> =
      await em.query(read.sql, [...read.parameters]);
    const sketches = new Map(hours.map((h) => [h, new VisitorSketch()]));
    const whole = new VisitorSketch();
    const values = new ValueSketches();
    for (const s of sessions) {
      const at = hourOf(new Date(s.started_at));
      const hour = sketches.get(at);
      if (!hour) continue;
      // Hashed once, into its hour and its day, and its values' hours and days.
      const position = VisitorSketch.position(s.visitor_id);
      hour.set(position);
      whole.set(position);
      for (const dimension of SESSION_ATTRIBUTES) {
        values.of('hour', at, dimension, s[dimension]).set(position);
        values.of('day', day, dimension, s[dimension]).set(position);
      }
    }
    const others: Array<{ bucket: Date; registers: Buffer }> = await em.query(
      "SELECT bucket, registers FROM visitor_sketches WHERE site_id = ? AND grain = 'hour' AND bucket >= ? AND bucket < ?",
      [siteId, new Date(day), new Date(day + DAY_MS)],
    );
    for (const row of others)
      if (!sketches.has(new Date(row.bucket).getTime())) whole.mergeStored(row.registers);
    if (hours.length < 24) {
      const otherValues: Array<{
        bucket: Date;
        dimension: SessionAttribute;
        value: string;
        registers: Buffer;
      }> = await em.query(
        `SELECT bucket, dimension, value, registers FROM visitor_value_sketches
           WHERE site_id = ? AND dimension IN (${SESSION_ATTRIBUTES.map(() => '?').join(', ')}) AND grain = 'hour' AND bucket >= ? AND bucket < ?`,
        [siteId, ...SESSION_ATTRIBUTES, new Date(day), new Date(day + DAY_MS)],
      );
      for (const row of otherValues) {
        if (!sketches.has(new Date(row.bucket).getTime())) {
          values.of('day', day, row.dimension, row.value).mergeStored(row.registers);
        }
      }
    }
    await this.store(em, siteId, [
      ...[...sketches].map(([hour, sketch]) => ({ grain: 'hour' as const, bucket: hour, sketch })),
      { grain: 'day', bucket: day, sketch: whole },
    ]);
    await this.storeValues(em, siteId, day, hours, values);
    await em.query(
      `${this.sql.dialect.deleteByPrimaryKey('dirty_sketch_hours')} WHERE site_id = ? AND bucket IN (${hours.map(() => '?').join(',')})`,
      [siteId, ...hours.map((h) => new Date(h))],
    );
  }

  /** Replaces the value sketches of the rebuilt hours and of their day. */
  private async storeValues(
    em: EntityManager,
    siteId: number,
    day: number,
    hours: readonly number[],
    values: ValueSketches,
  ): Promise<void> {
    const dimensions = SESSION_ATTRIBUTES.map(() => '?').join(', ');
    await em.query(
      `DELETE FROM visitor_value_sketches WHERE site_id = ? AND dimension IN (${dimensions})
       AND ((grain = 'hour' AND bucket IN (${hours.map(() => '?').join(', ')})) OR (grain = 'day' AND bucket = ?))`,
      [siteId, ...SESSION_ATTRIBUTES, ...hours.map((h) => new Date(h)), new Date(day)],
    );
    const rows = values.rows();
    for (let i = 0; i < rows.length; i += VALUE_WRITE_ROWS) {
      const part = rows.slice(i, i + VALUE_WRITE_ROWS);
      await em.query(
        `INSERT INTO visitor_value_sketches (site_id, dimension, grain, bucket, value, registers) VALUES ${part
          .map(() => '(?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        part.flatMap((r) => [siteId, r.dimension, r.grain, new Date(r.bucket), r.value, r.sketch.encode()]),
      );
    }
  }

  /** Writes the sketches, and removes those left with no session in their hour or day. */
  private async store(
    em: EntityManager,
    siteId: number,
    sketches: ReadonlyArray<{ grain: 'hour' | 'day'; bucket: number; sketch: VisitorSketch }>,
  ): Promise<void> {
    const empty = sketches.filter((s) => s.sketch.isEmpty());
    const kept = sketches.filter((s) => !empty.includes(s));
    if (empty.length > 0) {
      await em.query(
        `DELETE FROM visitor_sketches WHERE site_id = ? AND ${this.sql.dialect.rowsIn(['grain', 'bucket'], empty.length)}`,
        [siteId, ...empty.flatMap((s) => [s.grain, new Date(s.bucket)])],
      );
    }
    if (kept.length > 0) {
      await em.query(
        `${this.sql.dialect.replaceInto('visitor_sketches', ['site_id', 'grain', 'bucket', 'registers'])} VALUES ${kept
          .map(() => '(?, ?, ?, ?)')
          .join(', ')}`,
        kept.flatMap((s) => [siteId, s.grain, new Date(s.bucket), s.sketch.encode()]),
      );
    }
  }
}

/** The sketches of one site's day by grain, bucket, attribute and value. */
class ValueSketches {
  private readonly byKey = new Map<
    string,
    {
      grain: SketchGrain;
      bucket: number;
      dimension: SessionAttribute;
      value: string;
      sketch: SparseVisitorSketch;
    }
  >();

  of(grain: SketchGrain, bucket: number, dimension: SessionAttribute, value: string): SparseVisitorSketch {
    const key = `${grain}\u0000${bucket}\u0000${dimension}\u0000${value}`;
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { grain, bucket, dimension, value, sketch: new SparseVisitorSketch() };
      this.byKey.set(key, entry);
    }
    return entry.sketch;
  }

  rows() {
    return [...this.byKey.values()];
  }
}
