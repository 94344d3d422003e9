import type { SqlDialect } from '@app/db';
import {
  AggregateOut,
  asSummed,
  col,
  combinationSketchesMayAnswer,
  decideTable,
  firstVisitOfRange,
  pageviewEngagementBySession,
  pageviewMetrics,
  pageviewRollupMetrics,
  ReportDb,
  ReportStatement,
  rowLess,
  SCROLL_DEPTH_BUCKETS,
  scrollDepthCounts,
  scrollDepthRollupCounts,
  sessionPagesComplement,
  sessionsSource,
  SESSIONS_BY_REPEAT,
  SESSIONS_BY_VISITOR,
  StatsQuery,
  StatsRepository,
  visitorSketchesMayAnswer,
  where,
  metricOut,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { sql, SqlBool } from 'kysely';

export interface PageviewEngagement {
  /** Σ time_on_page_seconds (exact decimal string) and how many pageviews carry one. */
  timeOnPageSum: string;
  timedPageviews: number;
  /** Pageviews per scroll-depth bucket, in SCROLL_DEPTH_BUCKETS order. */
  scrollBuckets: number[];
}

export interface SessionEngagement {
  sessions: number;
  sessionPageviews: number;
}

export interface VisitorReturns {
  visitors: number;
  returning: number;
}

type Count = number | string;

/** The metrics pageviewEngagement reads. */
const PAGEVIEW_ENGAGEMENT = ['timeOnPageSum', 'timedPageviews', 'scrollDepth'] as const;

/**
 * pageviewEngagement's statement over the query's pageviews (`tsum`, `timed`, `b0`…`b3`): under
 * filters through the selected sessions, else from the pageview rollup or the hits.
 */
function pageviewEngagementSelect(d: SqlDialect, query: StatsQuery, out: AggregateOut) {
  const table = decideTable(query, 'hits', { metrics: PAGEVIEW_ENGAGEMENT });
  if (table.kind === 'throughSessions') {
    // Under filters: the selected sessions' pageviews of the range, a whole session's from
    // its own sums (pageviewEngagementBySession).
    const sum = (column: string) => sql<Count>`COALESCE(SUM(${col('u', column)}), 0)`;
    return d.builder
      .selectFrom(pageviewEngagementBySession(d, query).as('u'))
      .select([
        out(d, 'timeOnPageSum', sum('tsum')).as('tsum'),
        sum('timed').as('timed'),
        ...SCROLL_DEPTH_BUCKETS.map((_, i) => sum(`b${i}`).as(`b${i}`)),
      ]);
  }
  if (table.kind === 'rollup') {
    const r = pageviewRollupMetrics('r');
    return d.builder
      .selectFrom('hit_rollups as r')
      .select([
        out(d, 'timeOnPageSum', r.timeOnPageSum).as('tsum'),
        r.timedPageviews.as('timed'),
        ...scrollDepthRollupCounts('r').map((count, i) => count.as(`b${i}`)),
      ])
      .where(where.hitRollups(query, 'r'));
  }
  const m = pageviewMetrics('h');
  return d.builder
    .selectFrom('hits as h')
    .select([
      out(d, 'timeOnPageSum', m.timeOnPageSum).as('tsum'),
      m.timedPageviews.as('timed'),
      ...scrollDepthCounts('h').map((count, i) => count.as(`b${i}`)),
    ])
    .where(where.hits(query, 'h', 'pageview'));
}

export const engagementStatements = {
  /**
   * Over the pageviews whose own ts is in the range. Under `page!=` one path whose rows are
   * current (sessionPagesComplement), the site's pageview rollup less the pageviews of the
   * path's sessions (as under `page==` it), in one statement.
   */
  pageviewEngagement(query: StatsQuery): ReportStatement<Record<string, Count>> {
    const without = sessionPagesComplement(query, { metrics: PAGEVIEW_ENGAGEMENT }, 'hits');
    if (without !== undefined) {
      return (d) =>
        rowLess<Record<string, Count>>(
          ['tsum', 'timed', ...SCROLL_DEPTH_BUCKETS.map((_, i) => `b${i}`)],
          pageviewEngagementSelect(d, without.site, asSummed),
          pageviewEngagementSelect(d, without.page, asSummed),
          (column, difference) =>
            column === 'tsum' ? metricOut(d, 'timeOnPageSum', difference) : difference,
        ).compile(d.builder);
    }
    return (d) => pageviewEngagementSelect(d, query, metricOut).compile();
  },

  /**
   * The visitors whose first-ever session started in the range: exactly the range's new
   * visitors (that session is one of the range's), read through (site_id, first_session_at).
   */
  newVisitors(query: StatsQuery): ReportStatement<{ visitors: Count }> {
    if (decideTable(query, 'visitors').rollupTable === 'visitor_first_rollups') {
      // The same visitors, counted by the quarter hour of their first session.
      return (d) =>
        d.builder
          .selectFrom('visitor_first_rollups as f')
          .select(sql<Count>`COALESCE(SUM(${col('f', 'visitors')}), 0)`.as('visitors'))
          .where(
            sql<SqlBool>`${col('f', 'site_id')} = ${query.site.id} AND ${col('f', 'bucket')} >= ${query.range.startUtc} AND ${col('f', 'bucket')} < ${query.range.endUtc}`,
          )
          .compile();
    }
    return (d) =>
      d.builder
        .selectFrom('visitors as v')
        .select(sql<Count>`COUNT(*)`.as('visitors'))
        .where(
          sql<SqlBool>`${col('v', 'site_id')} = ${query.site.id} AND ${col('v', 'first_session_at')} >= ${query.range.startUtc} AND ${col('v', 'first_session_at')} < ${query.range.endUtc}`,
        )
        .compile();
  },

  /**
   * The range's returning visitors alone (those of the selected sessions whose first-ever session
   * is before the range), exactly, from each session's copy of its visitor's first session, as
   * visitorReturns outside the raw path: where the visitors are estimated by combination of
   * attributes (EngagementQueries.visitorReturns). Such a session is a repeat visit (its visitor's
   * first session is before its own start), so it is read from the selected combinations' repeat
   * sessions alone (SESSIONS_BY_REPEAT): at 10M pageviews under `source==google;device==mobile`
   * 47,431 of the 304,737 selected sessions, 0.14-0.15 s -> 0.02-0.04 s (BENCHMARKS.md run BH).
   */
  returningVisitors(query: StatsQuery): ReportStatement<{ returners: Count }> {
    return (d) =>
      sql<{ returners: Count }>`SELECT COUNT(DISTINCT s.visitor_id) AS returners
        FROM ${sql.raw(d.tableWithIndex('sessions', 's', SESSIONS_BY_REPEAT))}
        WHERE ${where.sessions(query, 's')} AND s.is_repeat = 1 AND s.visitor_first_at < ${query.range.startUtc}`.compile(
        d.builder,
      );
  },

  /**
   * The range's visitors (of its sessions) and how many had their first-ever session before it.
   * Outside the raw path, from each selected session's copy of its visitor's first session
   * (below). The raw path, the parity's reference, reads the visitors table:
   * each selected session's visitor looked up by key in the visitors table (a visitor without a
   * row there counts nowhere, as before), and both counted distinct. The sessions are read
   * first (orderedJoin): joined freely, MariaDB 10.11 read every visitor of the site and probed
   * the sessions for each (28.5 s by hand at 10M pageviews under `source==google;device==mobile`).
   * Not through SESSIONS_BY_VISITOR: MariaDB took its visitor order (no sort for the distinct)
   * and read each session's row by key for the filter, 5.2 s against 2.1 s reading the site's
   * rows in order (BENCHMARKS.md run AD). A first pass of distinct visitor ids looked up after
   * materialised the ids (a VARCHAR(64), 258 bytes a row in memory), past the in-memory
   * temporary tables at 10M (docs/decisions/filters.md). The visitor is read by its primary key
   * whatever the statistics say: under a page condition, with the benchmark's smoke data, MariaDB
   * once read the site's visitors through `ix_visitors_site_first_session` for each session
   * (182M rows examined, 13.5 s instead of 0.05 s).
   */
  visitorReturns(query: StatsQuery): ReportStatement<{ visitors: Count; returners: Count }> {
    decideTable(query, 'sessions');
    const source = sessionsSource(query, 's');
    const from = (d: SqlDialect) =>
      source.pages ? source.raw : sql.raw(d.tableWithoutIndex('sessions', 's', SESSIONS_BY_VISITOR));
    if (query.tables !== 'raw') {
      // The same counts from each selected session's copy of its visitor's first session
      // (visitor_first_at, equal to the visitors table's row: copyFirstSessions), so the
      // selected sessions are read alone: under a page, entry or exit page condition its rows
      // in session_pages, which keep the same copy (migration 1769000000000: at 10M pageviews
      // under page==/pricing 2.88 -> 1.35 s for the report, under exit_page==/pricing 1.61 ->
      // 0.90 s, BENCHMARKS.md run BS); under conditions on attributes from
      // ix_sessions_site_combination. A session without a copy counts nowhere, as below.
      const first = firstVisitOfRange(query, 's');
      if (first !== undefined) {
        // Under `page==` one path: each visitor once, by its first visit of the range there
        // (migration 1769100000000: at 10M pageviews under page==/pricing the report 1.50 ->
        // 0.98 s on a slow host, BENCHMARKS.md run BT).
        return (d) =>
          sql<{ visitors: Count; returners: Count }>`SELECT
              COUNT(CASE WHEN ${first} AND s.visitor_first_at IS NOT NULL THEN 1 END) AS visitors,
              COUNT(CASE WHEN ${first} AND s.visitor_first_at < ${query.range.startUtc} THEN 1 END) AS returners
            FROM ${from(d)}
            WHERE ${where.sessions(query, 's', source)}`.compile(d.builder);
      }
      return (d) => {
        const sessions = sql`(SELECT s.visitor_id, s.visitor_first_at
          FROM ${from(d)}
          WHERE ${where.sessions(query, 's', source)})`;
        const known = sql`CASE WHEN ${col('j', 'visitor_first_at')} IS NOT NULL THEN ${col('j', 'visitor_id')} END`;
        const returning = sql`CASE WHEN ${col('j', 'visitor_first_at')} < ${query.range.startUtc} THEN ${col('j', 'visitor_id')} END`;
        return d.builder
          .selectFrom(sessions.as('j'))
          .select([
            sql<Count>`COUNT(DISTINCT ${known})`.as('visitors'),
            sql<Count>`COUNT(DISTINCT ${returning})`.as('returners'),
          ])
          .compile();
      };
    }
    return (d) => {
      const sessions = sql`(SELECT s.visitor_id, v.first_session_at
        FROM ${from(d)}
        ${sql.raw(d.orderedJoin)} ${sql.raw(d.tableByPrimaryKey('visitors', 'v'))} ON v.site_id = ${query.site.id} AND v.visitor_id = s.visitor_id
        WHERE ${where.sessions(query, 's', source)})`;
      const returning = sql`CASE WHEN ${col('j', 'first_session_at')} < ${query.range.startUtc} THEN ${col('j', 'visitor_id')} END`;
      return d.builder
        .selectFrom(sessions.as('j'))
        .select([
          sql<Count>`COUNT(DISTINCT ${col('j', 'visitor_id')})`.as('visitors'),
          sql<Count>`COUNT(DISTINCT ${returning})`.as('returners'),
        ])
        .compile();
    };
  },
};

@Injectable()
export class EngagementQueries {
  constructor(
    private readonly db: ReportDb,
    private readonly stats: StatsRepository,
  ) {}

  async pageviewEngagement(query: StatsQuery): Promise<PageviewEngagement> {
    const [row] = await this.db.run(engagementStatements.pageviewEngagement(query));
    return {
      timeOnPageSum: String(row.tsum),
      timedPageviews: Number(row.timed),
      scrollBuckets: SCROLL_DEPTH_BUCKETS.map((_, i) => Number(row[`b${i}`])),
    };
  }

  sessionEngagement(query: StatsQuery): Promise<SessionEngagement> {
    return this.stats.sessionTotals(query, ['sessions', 'sessionPageviews']);
  }

  /**
   * Returning = visitors − new. Unfiltered, the visitors are the shared distinct count and the
   * new ones an index range of the visitors table; under filters (or on the raw path) one
   * statement joins the range's visitors to their first session.
   */
  async visitorReturns(query: StatsQuery): Promise<VisitorReturns> {
    if (decideTable(query, 'visitors').kind === 'rollup') {
      const [{ visitors }, [fresh]] = await Promise.all([
        this.stats.sessionTotalsAndVisitors(query, []),
        this.db.run(engagementStatements.newVisitors(query)),
      ]);
      // An estimated count (visitor sketches) can fall short of the exact new visitors.
      return { visitors, returning: Math.max(0, visitors - Number(fresh.visitors)) };
    }
    if (combinationSketchesMayAnswer(query) && visitorSketchesMayAnswer(query)) {
      // Under conditions on several attributes: the visitors estimated from the combinations'
      // sketches where they may be, the returning ones counted exactly, and new = the rest.
      const [estimate, [row]] = await Promise.all([
        this.stats.estimatedVisitors(query),
        this.db.run(engagementStatements.returningVisitors(query)),
      ]);
      if (estimate !== undefined) {
        const returning = Number(row.returners);
        return { visitors: Math.max(estimate, returning), returning };
      }
    }
    const [row] = await this.db.run(engagementStatements.visitorReturns(query));
    return { visitors: Number(row.visitors), returning: Number(row.returners) };
  }
}
