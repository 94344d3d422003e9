import { bumpDataVersions, Sql, SqlDialect } from '@app/db';
import {
  attributeOrMissing,
  HITS_BY_SESSION,
  hitOrderSql,
  isBounceSql,
  SESSION_ATTRIBUTES,
} from '@app/stats/definitions';
import {
  attributeKey,
  AttributeRollupDelta,
  attributeRollupDeltas,
  fromMillis,
  PathRollupDelta,
  pathRollupDeltas,
  ROLLUP_DIMENSIONS,
  RolledUpSession,
  rollupBucket,
  RollupDelta,
  localDayBucket,
  PAIR_ROLLUP,
  pairRollupDeltas,
  sessionRollupDeltas,
} from '@app/stats/rollups/session-rollup';
import { PurchasedSession, purchaseRollupDeltas } from '@app/stats/rollups/purchase-rollup';
import { purchasingSessionsAmong } from '@app/stats/commerce';
import { sql } from 'kysely';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { eachAtOnce, shareOut } from './at-once';
import { withDeadlockRetry } from './retry';
import {
  inList,
  inListParts,
  ROLLUP_WRITE_ROWS,
  SESSIONS_COUNT,
  withBufferedRollupWrites,
  writeRollupDeltas,
} from './rollup-writer';
import { EventRollupBuilder } from './event-rollup-builder';
import { GoalRollupBuilder } from './goal-rollup-builder';
import {
  ORDER_ATTRIBUTE_ROLLUP,
  PAGEVIEW_ROLLUP,
  SessionBucketRollupBuilder,
} from './session-bucket-rollup-builder';
import { VisitorSketchBuilder } from './visitor-sketch-builder';
import { daySpanBucket, PathSpanDelta, pathSpanDeltas } from '@app/stats/rollups/day-split';

export const AGGREGATE_CHUNK = 2000;

export interface AggregateSummary {
  sessions: number;
  visitors: number;
  chunks: number;
  seconds: number;
  /** Sessions still queued when the run stopped (0 unless interrupted). */
  remaining: number;
  /** UTC hours whose visitor sketch was rebuilt (and their days). */
  sketchHours: number;
  /** Of `seconds`, the time the visitor sketches took (after the sessions). */
  sketchSeconds: number;
  /** Sites whose conversion rollups were rebuilt for a changed set of goals. */
  goalSites: number;
}

const SESSION_COLUMNS = [
  'site_id',
  'session_id',
  'visitor_id',
  'started_at',
  'ended_at',
  'hits',
  'pageviews',
  'events',
  'purchases',
  'is_bounce',
  'duration_seconds',
  'entry_path',
  'exit_path',
  ...SESSION_ATTRIBUTES,
  'purchased',
];

const ROLLUP_KEYS = ['dimension', 'bucket', 'value'];
const ROLLUP_SUMS = ['sessions', 'bounces', 'session_pageviews', 'duration_seconds'];
/** path_hash is the key; path itself is stored beside it, never summed. */
const PATH_ROLLUP_KEYS = ['dimension', 'bucket', 'path_hash', 'path'];
/** attributes_hash is the key; the five values are stored beside it, never summed. */
const ATTRIBUTE_ROLLUP_KEYS = ['bucket', 'attributes_hash', ...ROLLUP_DIMENSIONS];

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest();

/** The summed columns of the session and attribute rollups, in ROLLUP_SUMS order. */
const sessionSums = (d: SqlDialect) => (r: Omit<RollupDelta, 'dimension' | 'value'>) => [
  r.sessions,
  r.bounces,
  r.sessionPageviews,
  d.decimalIn(fromMillis(r.durationMillis), 3),
];

/**
 * Derives sessions (SPEC §1: attributes from the first hit, entry/exit page, bounce,
 * duration) and visitors' first sessions from the hits of queued sessions. Each chunk
 * recomputes its sessions from all their hits, so running it twice, or after late and
 * out-of-order hits, gives the same rows as running it once over everything.
 */
@Injectable()
export class SessionAggregator {
  private stopRequested = false;
  private readonly sketches: VisitorSketchBuilder;
  private readonly goals: GoalRollupBuilder;
  private readonly events: EventRollupBuilder;
  private readonly pageviews: SessionBucketRollupBuilder;
  private readonly revenue: SessionBucketRollupBuilder;
  private localDays = new Map<number, (instant: Date) => Date>();
  private daySpans = new Map<number, (span: number) => (dayStart: Date) => Date>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {
    this.sketches = new VisitorSketchBuilder(ds, sql);
    this.goals = new GoalRollupBuilder(ds, sql);
    this.events = new EventRollupBuilder(sql);
    this.pageviews = new SessionBucketRollupBuilder(sql, PAGEVIEW_ROLLUP);
    this.revenue = new SessionBucketRollupBuilder(sql, ORDER_ATTRIBUTE_ROLLUP);
  }

  requestStop(): void {
    this.stopRequested = true;
  }

  async pending(): Promise<number> {
    const rows: Array<{ n: number | string }> = await this.ds.query(
      'SELECT COUNT(*) AS n FROM dirty_sessions',
    );
    return Number(rows[0].n);
  }

  async run(onChunk?: (done: number) => void, chunkSize = AGGREGATE_CHUNK): Promise<AggregateSummary> {
    const started = process.hrtime.bigint();
    this.stopRequested = false;
    this.localDays = new Map();
    this.daySpans = new Map();
    const summary: AggregateSummary = {
      sessions: 0,
      visitors: 0,
      chunks: 0,
      seconds: 0,
      remaining: 0,
      sketchHours: 0,
      sketchSeconds: 0,
      goalSites: 0,
    };
    // Conversion rollups of sites whose goals changed, before the chunks add to them.
    summary.goalSites = await this.goals.reconcile();
    for (;;) {
      if (this.stopRequested) break;
      const done = await this.aggregateChunk(chunkSize);
      if (done.queued === 0) break;
      // After the commits (see HitImporter): reports cached under the new version see this chunk.
      await bumpDataVersions(this.ds.manager, this.sql.dialect, done.sites);
      summary.sessions += done.sessions;
      summary.visitors += done.visitors;
      summary.chunks++;
      onChunk?.(summary.sessions);
    }
    // Until they are rebuilt, reports count the visitors of those hours' ranges exactly.
    const sketchesStarted = process.hrtime.bigint();
    summary.sketchHours = await this.sketches.rebuild(() => this.stopRequested);
    summary.sketchSeconds = Number(process.hrtime.bigint() - sketchesStarted) / 1e9;
    summary.remaining = this.stopRequested ? await this.pending() : 0;
    summary.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return summary;
  }

  /**
   * The next `chunkSize` queued sessions, their sites shared out over `dialect.writers`
   * transactions that run at once, each deriving its sites one after another (in site order). A
   * site's rows (sessions, rollups, sketch queue) are its own, so two of them never wait for each
   * other, and an hour of traffic over hundreds of small sites is not every site's round trips
   * one after another (nor a commit per site).
   */
  private async aggregateChunk(
    chunkSize: number,
  ): Promise<{ queued: number; sessions: number; visitors: number; sites: number[] }> {
    const queued: Array<{ site_id: number | string; session_id: string }> = await this.ds.query(
      `SELECT site_id, session_id FROM dirty_sessions ORDER BY site_id, session_id LIMIT ${Number(chunkSize)}`,
    );
    const bySite = new Map<number, string[]>();
    for (const q of queued) {
      const list = bySite.get(Number(q.site_id)) ?? [];
      list.push(q.session_id);
      bySite.set(Number(q.site_id), list);
    }
    const done = { queued: queued.length, sessions: 0, visitors: 0, sites: [] as number[] };
    const groups = shareOut([...bySite], this.sql.dialect.writers, ([, ids]) => ids.length);
    await eachAtOnce(groups, groups.length, async (group) => {
      const derived = await withDeadlockRetry(() =>
        this.ds.transaction(this.sql.dialect.writeIsolation, (em) =>
          // The group's rollup rows go in a few statements at its end, every site's together.
          withBufferedRollupWrites(em, this.sql.dialect, async () => {
            const counts: Array<{ siteId: number; sessions: number; visitors: number }> = [];
            // A site's sessions in parts whose IN lists MariaDB reads by key (MAX_IN_LIST).
            for (const [siteId, sessionIds] of group)
              for (const part of inListParts(sessionIds))
                counts.push({ siteId, ...(await this.aggregateSite(em, siteId, part)) });
            return counts;
          }),
        ),
      );
      for (const site of derived) {
        done.sessions += site.sessions;
        done.visitors += site.visitors;
        if (site.sessions > 0) done.sites.push(site.siteId);
      }
    });
    return done;
  }

  /** Derives the queued `listed` sessions of one site that are still queued, in the caller's transaction. */
  private async aggregateSite(
    em: EntityManager,
    siteId: number,
    listed: readonly string[],
  ): Promise<{ sessions: number; visitors: number }> {
    // Locked until commit: an import adding a hit to one of these sessions waits, then queues it
    // again. A session another aggregator derived since the list was read is no longer queued.
    const sessionIds = (
      await em.query<Array<{ session_id: string }>>(
        this.sql.dialect.lockingRead(
          `SELECT session_id FROM dirty_sessions WHERE site_id = ? AND session_id IN (${inList(listed.length)}) ORDER BY session_id`,
        ),
        [siteId, ...listed],
      )
    ).map((r) => r.session_id);
    if (sessionIds.length === 0) return { sessions: 0, visitors: 0 };
    const before = await this.derivedSessions(em, siteId, sessionIds);
    const derive = deriveSessionsStatement(this.sql.dialect, siteId, sessionIds);
    await em.query(derive.sql, [...derive.parameters]);
    const after = await this.derivedSessions(em, siteId, sessionIds);
    const localDay = await this.localDayOf(em, siteId);
    await this.applyRollupDeltas(em, siteId, sessionRollupDeltas(before, after));
    await this.applyPathRollupDeltas(em, siteId, pathRollupDeltas(before, after));
    await this.applyRollupDeltas(
      em,
      siteId,
      sessionRollupDeltas(before, after, localDay),
      'session_day_rollups',
    );
    const pathDays = pathRollupDeltas(before, after, localDay);
    await this.applyPathRollupDeltas(em, siteId, pathDays, 'session_path_day_rollups');
    await this.applyPathSpanRollupDeltas(
      em,
      siteId,
      pathSpanDeltas(pathDays, await this.daySpansOf(em, siteId)),
    );
    await this.applyAttributeRollupDeltas(em, siteId, attributeRollupDeltas(before, after));
    await this.applyAttributeRollupDeltas(
      em,
      siteId,
      attributeRollupDeltas(before, after, localDay),
      'session_attribute_day_rollups',
    );
    await writeRollupDeltas(em, this.sql.dialect, siteId, pairRollupDeltas(before, after, localDay), {
      ...PAIR_ROLLUP,
      sums: ['sessions'],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
    await writeRollupDeltas(em, this.sql.dialect, siteId, purchaseRollupDeltas(before, after), {
      table: 'purchase_rollups',
      keys: ['bucket'],
      sums: ['sessions'],
      identity: ['bucket'],
      keyValues: (r) => [r.bucket],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
    await this.goals.apply(em, siteId, before, after, localDay);
    await this.events.apply(em, siteId, sessionIds, localDay);
    await this.pageviews.apply(em, siteId, sessionIds, before, after, localDay);
    await this.revenue.apply(em, siteId, sessionIds, before, after, localDay);
    await this.sketches.queue(
      em,
      siteId,
      [...before, ...after].map((r) => new Date(r.started_at)),
    );
    const touched = [...new Set([...before, ...after].map((r) => r.visitor_id))];
    const firstBefore = await this.firstSessions(em, siteId, touched);
    await em.query(`DELETE FROM visitors WHERE site_id = ? AND visitor_id IN (${inList(touched.length)})`, [
      siteId,
      ...touched,
    ]);
    await em.query(
      `INSERT INTO visitors (site_id, visitor_id, first_session_at)
       SELECT site_id, visitor_id, MIN(started_at) FROM sessions
       WHERE site_id = ? AND visitor_id IN (${inList(touched.length)})
       GROUP BY site_id, visitor_id`,
      [siteId, ...touched],
    );
    await this.applyNewVisitorDeltas(em, siteId, firstBefore, await this.firstSessions(em, siteId, touched));
    await em.query(
      `${this.sql.dialect.deleteByPrimaryKey('dirty_sessions')} WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
      [siteId, ...sessionIds],
    );
    return { sessions: sessionIds.length, visitors: touched.length };
  }

  /**
   * The day rollups' bucket function of a site: its local day (a site's zone never changes).
   * One per site and run, so that its memo of 15-minute buckets stays bounded by the run.
   */
  private async localDayOf(em: EntityManager, siteId: number): Promise<(instant: Date) => Date> {
    const known = this.localDays.get(siteId);
    if (known) return known;
    const bucketOf = localDayBucket(await this.siteZone(em, siteId));
    this.localDays.set(siteId, bucketOf);
    return bucketOf;
  }

  /** The path span rollups' block functions of a site (daySpanBucket per span), one per site and run. */
  private async daySpansOf(
    em: EntityManager,
    siteId: number,
  ): Promise<(span: number) => (dayStart: Date) => Date> {
    const known = this.daySpans.get(siteId);
    if (known) return known;
    const zone = await this.siteZone(em, siteId);
    const bySpan = new Map<number, (dayStart: Date) => Date>();
    const blockOf = (span: number) => {
      const of = bySpan.get(span) ?? daySpanBucket(zone, span);
      bySpan.set(span, of);
      return of;
    };
    this.daySpans.set(siteId, blockOf);
    return blockOf;
  }

  private async siteZone(em: EntityManager, siteId: number): Promise<string> {
    const [site]: Array<{ timezone: string }> = await em.query('SELECT timezone FROM sites WHERE id = ?', [
      siteId,
    ]);
    if (!site) throw new Error(`site ${siteId} has hits queued for aggregation but no row in sites`);
    return site.timezone;
  }

  /** The first-session starts these visitors have in the visitors table. */
  private async firstSessions(em: EntityManager, siteId: number, visitorIds: string[]): Promise<Date[]> {
    const rows: Array<{ first_session_at: Date }> = await em.query(
      `SELECT first_session_at FROM visitors WHERE site_id = ? AND visitor_id IN (${inList(visitorIds.length)})`,
      [siteId, ...visitorIds],
    );
    return rows.map((r) => new Date(r.first_session_at));
  }

  /**
   * Keeps visitor_first_rollups equal to the visitors table: the touched visitors' first
   * sessions before this chunk leave their buckets and their first sessions now enter theirs.
   */
  private async applyNewVisitorDeltas(
    em: EntityManager,
    siteId: number,
    before: readonly Date[],
    after: readonly Date[],
  ): Promise<void> {
    const deltas = new Map<number, number>();
    for (const at of before)
      deltas.set(rollupBucket(at).getTime(), (deltas.get(rollupBucket(at).getTime()) ?? 0) - 1);
    for (const at of after)
      deltas.set(rollupBucket(at).getTime(), (deltas.get(rollupBucket(at).getTime()) ?? 0) + 1);
    const changed = [...deltas].filter(([, n]) => n !== 0);
    const d = this.sql.dialect;
    for (let i = 0; i < changed.length; i += ROLLUP_WRITE_ROWS) {
      const part = changed.slice(i, i + ROLLUP_WRITE_ROWS);
      await em.query(
        d.upsertAdd('visitor_first_rollups', ['site_id', 'bucket'], ['visitors'], part.length, [
          'site_id',
          'bucket',
        ]),
        part.flatMap(([bucket, n]) => [siteId, new Date(bucket), n]),
      );
      const emptied = part.filter(([, n]) => n < 0);
      if (emptied.length === 0) continue;
      await em.query(
        `DELETE FROM visitor_first_rollups WHERE site_id = ? AND visitors = 0 AND bucket IN (${inList(emptied.length)})`,
        [siteId, ...emptied.map(([bucket]) => new Date(bucket))],
      );
    }
  }

  /** The derived rows of these sessions as the rollup and the visitors table need them. */
  private derivedSessions(
    em: EntityManager,
    siteId: number,
    sessionIds: string[],
  ): Promise<Array<RolledUpSession & PurchasedSession & { session_id: string; visitor_id: string }>> {
    return em.query(
      `SELECT session_id, visitor_id, started_at, ${ROLLUP_DIMENSIONS.join(', ')}, entry_path, exit_path, is_bounce, pageviews, purchased,
         ${this.sql.dialect.decimalText(sql.ref('duration_seconds'), 3).compile(this.sql.dialect.builder).sql} AS duration_seconds
       FROM sessions WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
      [siteId, ...sessionIds],
    );
  }

  /**
   * Keeps the session rollup equal to the sessions table: the re-derived sessions' old rows
   * subtracted and new rows added, in the chunk's transaction; rows left with no session go.
   */
  private applyRollupDeltas(
    em: EntityManager,
    siteId: number,
    deltas: RollupDelta[],
    table: 'session_rollups' | 'session_day_rollups' = 'session_rollups',
  ): Promise<void> {
    return writeRollupDeltas(em, this.sql.dialect, siteId, deltas, {
      table,
      keys: ROLLUP_KEYS,
      sums: ROLLUP_SUMS,
      identity: ['dimension', 'bucket', 'value'],
      keyValues: (r) => [r.dimension, r.bucket, r.value],
      sumValues: sessionSums(this.sql.dialect),
      count: SESSIONS_COUNT,
    });
  }

  /** The same for the entry and exit pages (keyed by the path's MD5, as the migration does). */
  private applyPathRollupDeltas(
    em: EntityManager,
    siteId: number,
    deltas: PathRollupDelta[],
    table: 'session_path_rollups' | 'session_path_day_rollups' = 'session_path_rollups',
  ): Promise<void> {
    return writeRollupDeltas(em, this.sql.dialect, siteId, deltas, {
      table,
      keys: PATH_ROLLUP_KEYS,
      sums: ['sessions'],
      identity: ['dimension', 'bucket', 'path_hash'],
      keyValues: (r) => [r.dimension, r.bucket, md5(r.path), r.path],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
  }
  private applyPathSpanRollupDeltas(
    em: EntityManager,
    siteId: number,
    deltas: PathSpanDelta[],
  ): Promise<void> {
    return writeRollupDeltas(em, this.sql.dialect, siteId, deltas, {
      table: 'session_path_span_rollups',
      keys: ['dimension', 'span', 'bucket', 'path_hash', 'path'],
      sums: ['sessions'],
      identity: ['dimension', 'span', 'bucket', 'path_hash'],
      keyValues: (r) => [r.dimension, r.span, r.bucket, md5(r.path), r.path],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
  }

  /** The same for the attribute rollup (keyed by the MD5 of attributeKey, as the migration does). */
  private applyAttributeRollupDeltas(
    em: EntityManager,
    siteId: number,
    deltas: AttributeRollupDelta[],
    table: 'session_attribute_rollups' | 'session_attribute_day_rollups' = 'session_attribute_rollups',
  ): Promise<void> {
    return writeRollupDeltas(em, this.sql.dialect, siteId, deltas, {
      table,
      keys: ATTRIBUTE_ROLLUP_KEYS,
      sums: ROLLUP_SUMS,
      identity: ['bucket', 'attributes_hash'],
      keyValues: (r) => [
        r.bucket,
        md5(attributeKey(ROLLUP_DIMENSIONS.map((dim) => r[dim]))),
        ...ROLLUP_DIMENSIONS.map((dim) => r[dim]),
      ],
      sumValues: sessionSums(this.sql.dialect),
      count: SESSIONS_COUNT,
    });
  }
}

/**
 * One set-based statement: every queued session of a site recomputed from all its hits.
 * The first hit, first pageview and last pageview are picked by index-ordered LIMIT 1
 * subqueries through ix_hits_site_session, (site_id, session_id, ts, seq, …), named in the SQL:
 * left to statistics taken while the table was small, MariaDB chose (site_id, ts) instead
 * and scanned every hit of the site for each session (the demo's aggregate took minutes). A single pass with
 * several ROW_NUMBER() windows was tried first and MariaDB 10.11 mixed up which row was
 * first when the windows had different PARTITION BY lists. Whether a session purchased comes
 * from the batch's purchasing sessions, read once (purchasingSessionsAmong).
 */
export function deriveSessionsStatement(
  d: SqlDialect,
  siteId: number,
  sessionIds: readonly string[],
): { sql: string; parameters: readonly unknown[] } {
  const pick = (column: string, pageviewsOnly: boolean, direction: 'asc' | 'desc') =>
    sql`(SELECT ${sql.ref(`x.${column}`)} FROM ${sql.raw(d.tableWithIndex('hits', 'x', HITS_BY_SESSION))} WHERE x.site_id = a.site_id AND x.session_id = a.session_id${
      pageviewsOnly ? sql` AND x.type = 'pageview'` : sql``
    } ORDER BY ${sql.raw(hitOrderSql('x', direction))} LIMIT 1)`;
  return sql`${sql.raw(d.replaceInto('sessions', SESSION_COLUMNS))}
    SELECT a.site_id, a.session_id, f.visitor_id, a.started_at, a.ended_at,
      a.hits, a.pageviews, a.events, a.purchases,
      ${sql.raw(isBounceSql('a'))},
      ${d.secondsBetween(sql.ref('a.started_at'), sql.ref('a.ended_at'))},
      ${pick('path', true, 'asc')},
      ${pick('path', true, 'desc')},
      ${sql.join(SESSION_ATTRIBUTES.map((attr) => attributeOrMissing(attr, sql.ref(`f.${attr}`))))},
      CASE WHEN po.session_id IS NULL THEN 0 ELSE 1 END
    FROM (
      SELECT h.site_id, h.session_id, MIN(h.ts) AS started_at, MAX(h.ts) AS ended_at, COUNT(*) AS hits,
        SUM(h.type = 'pageview') AS pageviews, SUM(h.type = 'event') AS events, SUM(h.type = 'purchase') AS purchases
      FROM hits h
      WHERE h.site_id = ${siteId} AND h.session_id IN (${sql.join([...sessionIds])})
      GROUP BY h.site_id, h.session_id
    ) a
    JOIN hits f ON f.seq = ${pick('seq', false, 'asc')}
    LEFT JOIN (${purchasingSessionsAmong(siteId, sessionIds)}) po ON po.session_id = a.session_id`.compile(
    d.builder,
  );
}
