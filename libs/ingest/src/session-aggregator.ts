import { bumpDataVersions, parameterRows, Sql, SqlDialect } from '@app/db';
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
  EngagedSession,
  fromMillis,
  PathRollupDelta,
  pathRollupDeltas,
  ROLLUP_DIMENSIONS,
  rollupBucket,
  RollupDelta,
  localDayBucket,
  md5,
  PAIR_ROLLUP,
  pairRollupDeltas,
  COMBINATION_PATH_ROLLUP,
  combinationPathRollupDeltas,
  sessionRollupDeltas,
  toMillis,
} from '@app/stats/rollups/session-rollup';
import { PurchasedSession, purchaseRollupDeltas } from '@app/stats/rollups/purchase-rollup';
import { purchasingSessionsAmong } from '@app/stats/commerce';
import { siteKeysWhere } from '@app/stats/sql/site-keys';
import {
  DERIVED_SESSION_COLUMNS,
  priorVisitsUpdate,
  SESSION_PAGES,
  SESSION_PAGES_BY_SESSION,
  sessionPagesDelete,
  sessionPagesInsert,
} from '@app/stats/sql/session-pages';
import {
  isSecondsSum,
  SESSION_ENGAGEMENT_COLUMNS,
  sessionEngagementRows,
} from '@app/stats/sql/session-engagement';
import { sql } from 'kysely';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { eachAtOnce, shareOut } from './at-once';
import { withDeadlockRetry } from './retry';
import {
  flatRows,
  inList,
  inListParts,
  ROLLUP_WRITE_ROWS,
  rowsBySite,
  SESSIONS_COUNT,
  siteBatches,
  siteSessionsIn,
  SitePart,
  SiteSessions,
  sortByIdentity,
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
import { sketchChanges, VisitorSketchBuilder } from './visitor-sketch-builder';
import { earliestStarts } from './first-sessions';
import { daySpanBucket, SpanDelta, spanDeltas } from '@app/stats/rollups/day-split';

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

/** What deriveSessionsStatement writes, in its order: what deriving writes, then the visitor's first session. */
const SESSION_COLUMNS = [...DERIVED_SESSION_COLUMNS, 'visitor_first_at'];

const VISITOR_COLUMNS = ['site_id', 'visitor_id', 'first_session_at'];
/** Rows per INSERT into visitors: 1,500 parameters, well under SQLite's limit. */
const VISITOR_ROWS_PER_INSERT = 500;
const ROLLUP_KEYS = ['dimension', 'bucket', 'value'];
const ROLLUP_SUMS = ['sessions', 'bounces', 'session_pageviews', 'duration_seconds'];
/** path_hash is the key; path itself is stored beside it, never summed. */
const PATH_ROLLUP_KEYS = ['dimension', 'bucket', 'path_hash', 'path'];
/** attributes_hash is the key; the five values are stored beside it, never summed. */
const ATTRIBUTE_ROLLUP_KEYS = ['bucket', 'attributes_hash', ...ROLLUP_DIMENSIONS];
/** The attribute rollup sums the sessions' engagement sums too (migration 1768000000000). */
const ATTRIBUTE_ROLLUP_SUMS = [...ROLLUP_SUMS, ...SESSION_ENGAGEMENT_COLUMNS];

/** A derived session as the rollups, the visitors table and the sketches read it. */
type DerivedSession = EngagedSession &
  PurchasedSession & { site_id: number | string; session_id: string; visitor_id: string };

/** The summed columns of the session and attribute rollups, in ROLLUP_SUMS order. */
const sessionSums = (d: SqlDialect) => (r: Omit<RollupDelta, 'dimension' | 'value'>) => [
  r.sessions,
  r.bounces,
  r.sessionPageviews,
  d.decimalIn(fromMillis(r.durationMillis), 3),
];

/** The attribute rollup's summed columns, in ATTRIBUTE_ROLLUP_SUMS order. */
const attributeSums = (d: SqlDialect) => (r: AttributeRollupDelta) => [
  ...sessionSums(d)(r),
  ...SESSION_ENGAGEMENT_COLUMNS.map((c, i) =>
    isSecondsSum(c) ? d.decimalIn(fromMillis(r.engagement[i]), 3) : Number(r.engagement[i]),
  ),
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
  private zones = new Map<number, string>();
  /** By time zone: sites in the same zone share their days' memos (a thousand small sites, a few zones). */
  private localDays = new Map<string, (instant: Date) => Date>();
  private daySpans = new Map<string, (span: number) => (dayStart: Date) => Date>();

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
    this.zones = new Map();
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
            for (const batch of siteBatches(group)) {
              for (const count of await this.aggregateSites(em, batch)) counts.push(count);
            }
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

  /**
   * Derives the listed sessions of several sites that are still queued, in the caller's
   * transaction: each statement reads or writes every site's sessions (one index range per site),
   * and the rows each site's sessions change are worked out per site.
   */
  private async aggregateSites(
    em: EntityManager,
    listed: SiteSessions,
  ): Promise<Array<{ siteId: number; sessions: number; visitors: number }>> {
    const d = this.sql.dialect;
    // Locked until commit: an import adding a hit to one of these sessions waits, then queues it
    // again. A session another aggregator derived since the list was read is no longer queued.
    const lock = lockQueuedStatement(d, listed);
    const locked = rowsBySite(
      await em.query<Array<{ site_id: number | string; session_id: string }>>(lock.sql, lock.parameters),
    );
    const sites: SiteSessions = new Map(
      [...locked].map(([siteId, rows]) => [siteId, rows.map((r) => r.session_id)]),
    );
    if (sites.size === 0) return [];
    const before = rowsBySite(await this.derivedSessions(em, sites));
    const derive = deriveSessionsStatement(d, sites);
    await em.query(derive.sql, [...derive.parameters]);
    const after = rowsBySite(await this.derivedSessions(em, sites));
    await this.loadZones(em, [...sites.keys()]);
    const parts: Array<SitePart<DerivedSession>> = [...sites].map(([siteId, sessionIds]) => ({
      siteId,
      sessionIds,
      before: before.get(siteId) ?? [],
      after: after.get(siteId) ?? [],
      dayOf: this.localDayOf(siteId),
    }));
    await this.addCombinations(em, parts);
    await this.raiseSessionBounds(em, parts);
    for (const part of parts) await this.applySessionRollups(em, part);
    await this.goals.apply(em, parts);
    await this.events.apply(em, parts);
    await this.pageviews.apply(em, parts);
    await this.revenue.apply(em, parts);
    await this.sketches.queue(em, new Map(parts.map((p) => [p.siteId, sketchChanges(p.before, p.after)])));
    const touched: SiteSessions = new Map(
      parts.map((p) => [p.siteId, [...new Set([...p.before, ...p.after].map((r) => r.visitor_id))]]),
    );
    const earliest = parts.map((p) => earliestStarts(p.before, p.after));
    if (earliest.every((e) => e !== undefined)) {
      const { set, moved } = await this.advanceFirstSessions(
        em,
        parts.map((p, i) => [p.siteId, earliest[i]]),
      );
      await this.copyFirstSessions(em, set, moved);
    } else {
      await this.rederiveFirstSessions(em, parts, touched);
      await this.copyFirstSessions(em, touched, touched);
    }
    // Once the sessions' copies of their visitors' first sessions are set: each row copies its session's.
    await this.writeSessionPages(em, sites);
    await this.linkPriorVisits(em, touched);
    // A site at a time, for the reason of lockQueuedStatement: a DELETE that scans the queue
    // waits for every row another writer holds.
    for (const [siteId, sessionIds] of sites) {
      await em.query(
        `${d.deleteByPrimaryKey('dirty_sessions')} WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      );
    }
    return parts.map((p) => ({
      siteId: p.siteId,
      sessions: p.sessionIds.length,
      visitors: touched.get(p.siteId)!.length,
    }));
  }

  /**
   * The derived sessions' rows in session_pages (sql/session-pages.ts), in the transaction that
   * writes them: each one's rows deleted, then written again from its row in `sessions` and its
   * pages. A session only gains hits, but its columns change with them.
   */
  private async writeSessionPages(em: EntityManager, sites: SiteSessions): Promise<void> {
    const d = this.sql.dialect;
    for (const [siteId, sessionIds] of sites) {
      const deleted = sessionPagesDelete(
        d.deleteWithIndex(SESSION_PAGES, SESSION_PAGES_BY_SESSION),
        siteId,
        sessionIds,
      ).compile(d.builder);
      await em.query(deleted.sql, [...deleted.parameters]);
    }
    const insert = sessionPagesInsert(siteKeysWhere(sites, 'h')).compile(d.builder);
    await em.query(insert.sql, [...insert.parameters]);
  }

  /**
   * Each row in session_pages of the visitors of the chunk's sessions, before and after, given its
   * prior visit again (priorVisitsUpdate), once their rows are written: a new session of a
   * returning visitor gets the start of that visitor's last session under each of its pages; a
   * late earlier session, or one that changed visitor, moves the prior visit of the visitor's
   * sessions after it. Only the rows whose prior visit changes are written.
   */
  private async linkPriorVisits(em: EntityManager, visitors: SiteSessions): Promise<void> {
    const listed: SiteSessions = new Map([...visitors].filter(([, ids]) => ids.length > 0));
    if (listed.size === 0) return;
    const update = priorVisitsUpdate(this.sql.dialect, listed);
    await em.query(update.sql, [...update.parameters]);
  }

  /**
   * The derived sessions' combinations of the five attributes, added to their site's
   * (attribute_combinations) in the transaction that writes the sessions: the conditions on
   * attributes select a session through its combination there (combinationSelected).
   */
  private async addCombinations(
    em: EntityManager,
    parts: ReadonlyArray<SitePart<DerivedSession>>,
  ): Promise<void> {
    const rows: unknown[][] = [];
    for (const { siteId, after } of parts) {
      const combinations = new Map<string, string[]>();
      for (const session of after) {
        const values = ROLLUP_DIMENSIONS.map((dim) => session[dim]);
        combinations.set(attributeKey(values), values);
      }
      for (const [key, values] of combinations) rows.push([siteId, md5(key), ...values]);
    }
    sortByIdentity(rows, 1);
    const columns = ['site_id', 'attributes_hash', ...ROLLUP_DIMENSIONS];
    for (let i = 0; i < rows.length; i += ROLLUP_WRITE_ROWS) {
      const part = rows.slice(i, i + ROLLUP_WRITE_ROWS);
      await em.query(
        this.sql.dialect.insertIgnore('attribute_combinations', columns, part.length),
        part.flat(),
      );
    }
  }

  /**
   * Each site's bound of its sessions' durations (site_session_bounds) raised to the longest of
   * its re-derived sessions, in the transaction that writes them: a report that reads a session
   * finds the bound at least as long as it (StatsQuery.longestSessionMillis).
   */
  private async raiseSessionBounds(
    em: EntityManager,
    parts: ReadonlyArray<SitePart<DerivedSession>>,
  ): Promise<void> {
    const d = this.sql.dialect;
    const rows = parts
      .filter((p) => p.after.length > 0)
      .map(({ siteId, after }) => {
        const longest = after.reduce((max, s) => {
          const millis = toMillis(s.duration_seconds);
          return millis > max ? millis : max;
        }, 0n);
        return [siteId, d.decimalIn(fromMillis(longest), 3)];
      });
    if (rows.length === 0) return;
    await em.query(
      d.upsertMax('site_session_bounds', ['site_id'], 'longest_seconds', rows.length),
      rows.flat(),
    );
  }

  /** The session, path, attribute, pair, combination path and purchase rollups: one site's deltas (buffered writes). */
  private async applySessionRollups(em: EntityManager, part: SitePart<DerivedSession>): Promise<void> {
    const { siteId, before, after, dayOf: localDay } = part;
    await this.applyRollupDeltas(em, siteId, sessionRollupDeltas(before, after));
    await this.applyPathRollupDeltas(em, siteId, pathRollupDeltas(before, after));
    const days = sessionRollupDeltas(before, after, localDay);
    await this.applyRollupDeltas(em, siteId, days, 'session_day_rollups');
    await this.applySpanRollupDeltas(
      em,
      siteId,
      spanDeltas(
        days.map(({ bucket, dimension, value, sessions }) => ({ bucket, dimension, value, sessions })),
        this.daySpansOf(siteId),
        (d) => `${d.dimension}\u0000${d.value}`,
      ),
    );
    const pathDays = pathRollupDeltas(before, after, localDay);
    await this.applyPathRollupDeltas(em, siteId, pathDays, 'session_path_day_rollups');
    await this.applyPathSpanRollupDeltas(
      em,
      siteId,
      spanDeltas(pathDays, this.daySpansOf(siteId), (d) => `${d.dimension}\u0000${d.path}`),
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
    await writeRollupDeltas(
      em,
      this.sql.dialect,
      siteId,
      combinationPathRollupDeltas(before, after, localDay),
      {
        ...COMBINATION_PATH_ROLLUP,
        sums: ['sessions'],
        sumValues: (r) => [r.sessions],
        count: SESSIONS_COUNT,
      },
    );
    await writeRollupDeltas(em, this.sql.dialect, siteId, purchaseRollupDeltas(before, after), {
      table: 'purchase_rollups',
      keys: ['bucket'],
      sums: ['sessions'],
      identity: ['bucket'],
      keyValues: (r) => [r.bucket],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
  }

  /** Reads the time zones of the sites among `siteIds` not seen yet in this run (one statement). */
  private async loadZones(em: EntityManager, siteIds: readonly number[]): Promise<void> {
    const unknown = siteIds.filter((id) => !this.zones.has(id));
    if (unknown.length === 0) return;
    const rows: Array<{ id: number | string; timezone: string }> = await em.query(
      `SELECT id, timezone FROM sites WHERE id IN (${inList(unknown.length)})`,
      unknown,
    );
    for (const r of rows) this.zones.set(Number(r.id), r.timezone);
    for (const id of unknown)
      if (!this.zones.has(id))
        throw new Error(`site ${id} has hits queued for aggregation but no row in sites`);
  }

  /**
   * The day rollups' bucket function of a site: its local day (a site's zone never changes).
   * One per zone and run, so that its memo of site days stays bounded by the run.
   */
  private localDayOf(siteId: number): (instant: Date) => Date {
    const zone = this.zoneOf(siteId);
    const known = this.localDays.get(zone);
    if (known) return known;
    const bucketOf = localDayBucket(zone);
    this.localDays.set(zone, bucketOf);
    return bucketOf;
  }

  /** The path span rollups' block functions of a site (daySpanBucket per span), one per zone and run. */
  private daySpansOf(siteId: number): (span: number) => (dayStart: Date) => Date {
    const zone = this.zoneOf(siteId);
    const known = this.daySpans.get(zone);
    if (known) return known;
    const bySpan = new Map<number, (dayStart: Date) => Date>();
    const blockOf = (span: number) => {
      const of = bySpan.get(span) ?? daySpanBucket(zone, span);
      bySpan.set(span, of);
      return of;
    };
    this.daySpans.set(zone, blockOf);
    return blockOf;
  }

  /** A site's zone, read by loadZones. */
  private zoneOf(siteId: number): string {
    const zone = this.zones.get(siteId);
    if (zone === undefined) throw new Error(`the time zone of site ${siteId} was not read`);
    return zone;
  }

  /**
   * The touched visitors' first sessions read again from all their sessions, and
   * visitor_first_rollups moved with them: when a session of the chunk may have started later
   * than before or changed its visitor (earliestStarts).
   */
  private async rederiveFirstSessions(
    em: EntityManager,
    parts: ReadonlyArray<SitePart<DerivedSession>>,
    touched: SiteSessions,
  ): Promise<void> {
    const firstBefore = await this.firstSessions(em, touched);
    const visitorsWhere = siteSessionsIn(this.sql.dialect, touched, 'visitor_id');
    await em.query(`DELETE FROM visitors WHERE ${visitorsWhere.sql}`, visitorsWhere.parameters);
    await em.query(
      `INSERT INTO visitors (site_id, visitor_id, first_session_at)
       SELECT site_id, visitor_id, MIN(started_at) FROM sessions
       WHERE ${visitorsWhere.sql}
       GROUP BY site_id, visitor_id`,
      visitorsWhere.parameters,
    );
    const firstAfter = await this.firstSessions(em, touched);
    for (const { siteId } of parts)
      await this.applyNewVisitorDeltas(
        em,
        siteId,
        firstBefore.get(siteId) ?? [],
        firstAfter.get(siteId) ?? [],
      );
  }

  /**
   * The touched visitors' first sessions where the chunk's sessions only began earlier or are
   * new (site → visitor → the earliest start among them, earliestStarts): a visitor's stored
   * first session is replaced only where that start is earlier, and only those visitors move in
   * visitor_first_rollups. Most visitors of an hour are new (one row inserted) or returning
   * with an earlier first session (nothing written), so their other sessions are not read again.
   * Returns the visitors whose first session it set or moved (site → visitor ids), and of those
   * the ones it moved (whose first session was stored before).
   */
  private async advanceFirstSessions(
    em: EntityManager,
    sites: ReadonlyArray<readonly [number, ReadonlyMap<string, number>]>,
  ): Promise<{ set: SiteSessions; moved: SiteSessions }> {
    const d = this.sql.dialect;
    const visitors: SiteSessions = new Map(sites.map(([siteId, starts]) => [siteId, [...starts.keys()]]));
    const where = siteSessionsIn(d, visitors, 'visitor_id');
    // Locked until commit, as the DELETE of rederiveFirstSessions locks them.
    const rows: Array<{ site_id: number | string; visitor_id: string; first_session_at: Date }> =
      await em.query(
        d.lockingRead(`SELECT site_id, visitor_id, first_session_at FROM visitors WHERE ${where.sql}`),
        where.parameters,
      );
    const stored = new Map(
      rows.map((r) => [`${Number(r.site_id)}\u0000${r.visitor_id}`, new Date(r.first_session_at)]),
    );
    const replaced = new Map<number, string[]>();
    const inserted: unknown[][] = [];
    const firstSessionSet = new Map<number, string[]>();
    for (const [siteId, starts] of sites) {
      const before: Date[] = [];
      const after: Date[] = [];
      const moved: string[] = [];
      const written: string[] = [];
      for (const [visitor, at] of starts) {
        const was = stored.get(`${siteId}\u0000${visitor}`);
        if (was !== undefined && was.getTime() <= at) continue;
        if (was !== undefined) {
          before.push(was);
          moved.push(visitor);
        }
        after.push(new Date(at));
        inserted.push([siteId, visitor, new Date(at)]);
        written.push(visitor);
      }
      if (moved.length > 0) replaced.set(siteId, moved);
      if (written.length > 0) firstSessionSet.set(siteId, written);
      await this.applyNewVisitorDeltas(em, siteId, before, after);
    }
    if (replaced.size > 0) {
      const gone = siteSessionsIn(d, replaced, 'visitor_id');
      await em.query(`DELETE FROM visitors WHERE ${gone.sql}`, gone.parameters);
    }
    for (let i = 0; i < inserted.length; i += VISITOR_ROWS_PER_INSERT) {
      const part = inserted.slice(i, i + VISITOR_ROWS_PER_INSERT);
      await em.query(
        `INSERT INTO visitors (site_id, visitor_id, first_session_at) VALUES ${parameterRows(VISITOR_COLUMNS, part.length)}`,
        flatRows(part),
      );
    }
    return { set: firstSessionSet, moved: replaced };
  }

  /**
   * Each session of `visitors` (site → visitor ids) given its visitor's first session as the
   * visitors table now holds it: `sessions.visitor_first_at`, which the returning split reads
   * outside the raw path instead of looking each selected session's visitor up (migration
   * 1767800000000). Called with the visitors whose first session the chunk set or moved, in its
   * transaction, so a session's copy always equals its visitor's row. The rows in session_pages
   * keep the same copy (migration 1769000000000): the chunk's sessions' rows are written after
   * this, from their sessions; the rows of the other sessions of `moved` (the visitors whose
   * first session was stored and has moved) are set here. A new visitor has no other session.
   */
  private async copyFirstSessions(
    em: EntityManager,
    visitors: SiteSessions,
    moved: SiteSessions,
  ): Promise<void> {
    const listed: SiteSessions = new Map([...visitors].filter(([, ids]) => ids.length > 0));
    if (listed.size === 0) return;
    const d = this.sql.dialect;
    const where = siteSessionsIn(d, listed, 'visitor_id');
    await em.query(`UPDATE sessions SET ${firstSessionOf('sessions')} WHERE ${where.sql}`, where.parameters);
    const movedListed: SiteSessions = new Map([...moved].filter(([, ids]) => ids.length > 0));
    if (movedListed.size === 0) return;
    const movedWhere = siteSessionsIn(d, movedListed, 'visitor_id');
    const sessions = rowsBySite(
      await em.query<Array<{ site_id: number | string; session_id: string }>>(
        `SELECT site_id, session_id FROM sessions WHERE ${movedWhere.sql}`,
        movedWhere.parameters,
      ),
    );
    for (const [siteId, rows] of sessions) {
      for (const part of inListParts(rows.map((r) => r.session_id))) {
        await em.query(
          `${d.updateWithIndex(SESSION_PAGES, SESSION_PAGES_BY_SESSION)} SET ${firstSessionOf(SESSION_PAGES)}
           WHERE ${SESSION_PAGES}.site_id = ? AND ${SESSION_PAGES}.session_id IN (${inList(part.length)})`,
          [siteId, ...part],
        );
      }
    }
  }

  /** The first-session starts the visitors of `visitors` (site → visitor ids) have in the visitors table, by site. */
  private async firstSessions(em: EntityManager, visitors: SiteSessions): Promise<Map<number, Date[]>> {
    const where = siteSessionsIn(this.sql.dialect, visitors, 'visitor_id');
    const rows: Array<{ site_id: number | string; first_session_at: Date }> = await em.query(
      `SELECT site_id, first_session_at FROM visitors WHERE ${where.sql}`,
      where.parameters,
    );
    return new Map(
      [...rowsBySite(rows)].map(([siteId, list]) => [siteId, list.map((r) => new Date(r.first_session_at))]),
    );
  }

  /**
   * Keeps visitor_first_rollups equal to the visitors table: the touched visitors' first
   * sessions before this chunk leave their buckets and their first sessions now enter theirs
   * (buffered with the other rollups' rows).
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
    await writeRollupDeltas(em, this.sql.dialect, siteId, changed, {
      table: 'visitor_first_rollups',
      keys: ['bucket'],
      sums: ['visitors'],
      identity: ['bucket'],
      keyValues: ([bucket]) => [new Date(bucket)],
      sumValues: ([, n]) => [n],
      count: { column: 'visitors', of: ([, n]) => n },
    });
  }

  /** The derived rows of these sessions (of several sites) as the rollups and the visitors table need them. */
  private derivedSessions(em: EntityManager, sites: SiteSessions): Promise<DerivedSession[]> {
    const d = this.sql.dialect;
    const where = siteSessionsIn(d, sites);
    const decimal = (column: string) => d.decimalText(sql.ref(column), 3).compile(d.builder).sql;
    const engagement = SESSION_ENGAGEMENT_COLUMNS.map((c) => (isSecondsSum(c) ? `${decimal(c)} AS ${c}` : c));
    return em.query(
      `SELECT site_id, session_id, visitor_id, started_at, ${ROLLUP_DIMENSIONS.join(', ')}, entry_path, exit_path, is_bounce, pageviews, purchased,
         ${decimal('duration_seconds')} AS duration_seconds, ${engagement.join(', ')}
       FROM sessions WHERE ${where.sql}`,
      where.parameters,
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
    deltas: Array<SpanDelta<PathRollupDelta>>,
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

  /** Sessions by attribute value by blocks of site days (session_span_rollups). */
  private applySpanRollupDeltas(
    em: EntityManager,
    siteId: number,
    deltas: Array<SpanDelta<Pick<RollupDelta, 'bucket' | 'dimension' | 'value' | 'sessions'>>>,
  ): Promise<void> {
    return writeRollupDeltas(em, this.sql.dialect, siteId, deltas, {
      table: 'session_span_rollups',
      keys: ['dimension', 'span', 'bucket', 'value'],
      sums: ['sessions'],
      identity: ['dimension', 'span', 'bucket', 'value'],
      keyValues: (r) => [r.dimension, r.span, r.bucket, r.value],
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
      sums: ATTRIBUTE_ROLLUP_SUMS,
      identity: ['bucket', 'attributes_hash'],
      keyValues: (r) => [
        r.bucket,
        md5(attributeKey(ROLLUP_DIMENSIONS.map((dim) => r[dim]))),
        ...ROLLUP_DIMENSIONS.map((dim) => r[dim]),
      ],
      sumValues: attributeSums(this.sql.dialect),
      count: SESSIONS_COUNT,
    });
  }
}

/**
 * Locks the queued sessions among `sites` (site → session ids) and reads them, in one statement
 * whose sites are each read by key (`dialect.lockingReadEach`): an import adding a hit to one of
 * them waits, then queues it again, and a session another aggregator derived since the list was
 * read is no longer queued. OR-ed into one condition, MariaDB scanned the whole queue whenever
 * the listed sessions were a large share of it (a queue nearly drained: the end of every run,
 * and every run of a few minutes' traffic), and each writer then waited for the rows the others
 * held.
 */
export function lockQueuedStatement(
  d: SqlDialect,
  sites: SiteSessions,
): { sql: string; parameters: unknown[] } {
  const listed = [...sites].filter(([, ids]) => ids.length > 0);
  return {
    sql: d.lockingReadEach(
      'SELECT site_id, session_id FROM dirty_sessions',
      listed.map(([, ids]) => `site_id = ? AND session_id IN (${inList(ids.length)})`),
    ),
    parameters: listed.flatMap(([siteId, ids]) => [siteId, ...ids]),
  };
}

/**
 * `visitor_first_at = …` for an UPDATE of `table` (sessions, session_pages): the first session
 * of its row's visitor in the visitors table (NULL without a row there).
 */
function firstSessionOf(table: string): string {
  return `visitor_first_at =
    (SELECT v.first_session_at FROM visitors v WHERE v.site_id = ${table}.site_id AND v.visitor_id = ${table}.visitor_id)`;
}

/**
 * One set-based statement: every listed session of several sites recomputed from all its hits.
 * The first hit, first pageview and last pageview are picked by index-ordered LIMIT 1
 * subqueries through ix_hits_site_session, (site_id, session_id, ts, seq, …), named in the SQL:
 * left to statistics taken while the table was small, MariaDB chose (site_id, ts) instead
 * and scanned every hit of the site for each session (the demo's aggregate took minutes). A single pass with
 * several ROW_NUMBER() windows was tried first and MariaDB 10.11 mixed up which row was
 * first when the windows had different PARTITION BY lists. Whether a session purchased comes
 * from the batch's purchasing sessions, read once (purchasingSessionsAmong). Each row also keeps
 * its pageviews' engagement sums (sessionEngagementRows) and its visitor's first session as the
 * visitors table holds it before the chunk: where the chunk moves that, copyFirstSessions sets
 * it again after.
 */
export function deriveSessionsStatement(
  d: SqlDialect,
  sites: SiteSessions,
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
      CASE WHEN po.session_id IS NULL THEN 0 ELSE 1 END,
      ${sql.join(SESSION_ENGAGEMENT_COLUMNS.map((c) => sql`COALESCE(${sql.ref(`e.${c}`)}, 0)`))},
      fv.first_session_at
    FROM (
      SELECT h.site_id, h.session_id, MIN(h.ts) AS started_at, MAX(h.ts) AS ended_at, COUNT(*) AS hits,
        SUM(h.type = 'pageview') AS pageviews, SUM(h.type = 'event') AS events, SUM(h.type = 'purchase') AS purchases
      FROM hits h
      WHERE ${siteKeysWhere(sites, 'h')}
      GROUP BY h.site_id, h.session_id
    ) a
    JOIN hits f ON f.seq = ${pick('seq', false, 'asc')}
    LEFT JOIN (${purchasingSessionsAmong(sites)}) po ON po.site_id = a.site_id AND po.session_id = a.session_id
    LEFT JOIN (${sessionEngagementRows(siteKeysWhere(sites, 'p'))}) e ON e.site_id = a.site_id AND e.session_id = a.session_id
    LEFT JOIN visitors fv ON fv.site_id = a.site_id AND fv.visitor_id = f.visitor_id`.compile(d.builder);
}
