import { AppConfig } from '@app/config';
import { dataVersionColumns, DataVersionRow, formatDataVersion, SqlDialect, StatsDatabase } from '@app/db';
import { Injectable } from '@nestjs/common';
import { AliasedRawBuilder, ExpressionBuilder, sql, SqlBool } from 'kysely';
import { GoalDefinition } from './conversions';
import { HITS_BY_SESSION, pageviewPathIsAny } from './definitions';
import {
  combinationSketchesMayAnswer,
  decideTable,
  decideVisitorCount,
  sessionPagesComplement,
  visitorSketchesMayAnswer,
} from './plan/table-decider';
import type { StatsQuery } from './query/stats-query';
import { ReportDb, ReportStatement } from './report-db';
import {
  AggregateOut,
  asSummed,
  PageviewMetric,
  pageviewMetrics,
  rowLess,
  pageviewRollupMetrics,
  SessionMetric,
  sessionMetrics,
  sessionRollupMetrics,
  metricOut,
} from './sql/metrics';
import { rollupParts, unionAllOf } from './rollups/day-split';
import { toMillis } from './rollups/session-rollup';
import {
  hourOf,
  InflatedSketches,
  SketchCover,
  sketchCover,
  UtcInterval,
  VisitorSketch,
} from './rollups/visitor-sketch';
import { pageviewsByRollup } from './sql/pageviews-by-rollup';
import {
  pageviewsBesideSessionTotals,
  pageviewsBeyondWholeSessions,
  pageviewsBySession,
  wholeSessionsPageviews,
} from './sql/pageviews-by-session';
import { where } from './sql/where';
import {
  PAGE_CHECK_QUEUE,
  pageKeyUnderAny,
  PREFIX_KEYS,
  SESSION_PAGES,
  SESSION_PAGES_BY_SESSION,
  firstVisitOfRange,
  sessionsSource,
} from './sql/session-pages';
import { FilterValue, soleAttributeOf } from './query/filters';
import {
  combinationSelected,
  combinationsSelectedIn,
  LISTED_COMBINATIONS,
  rollupValueSelected,
  selectsFewCombinations,
  SessionScope,
  sessionSelected,
} from './sql/session-filter';

export type SessionTotals<M extends SessionMetric> = Record<M, number | string>;
export type PageviewTotals<M extends PageviewMetric> = Record<M, number | string>;

/** A stored visitor sketch as visitorSketches reads it: where it is kept, and its stored form. */
export interface StoredSketchRow {
  grain: string;
  bucket: Date | string;
  /** The attribute value of a value sketch; '' for the site's own. */
  value: string;
  /** Its bytes, or their hex text where the engine reads BLOBs so (SqlDialect.blobOut). */
  registers: string | Uint8Array;
}

/**
 * How many bytes of inflated dense sketches a process keeps (InflatedSketches): ~120 KB each,
 * so ~130 of them, the day sketches of a 30-day range of four busy sites.
 */
const INFLATED_SKETCH_BYTES = 16 * 2 ** 20;

/**
 * sessionTotals' statement over the range's selected sessions themselves (alias `s`), with `more`
 * columns over them.
 */
function sessionTotalsOfSessions<M extends SessionMetric>(
  d: SqlDialect,
  query: StatsQuery,
  metrics: readonly M[],
  more: ReadonlyArray<AliasedRawBuilder<unknown, string>> = [],
  out: AggregateOut = metricOut,
) {
  const m = sessionMetrics('s');
  const source = sessionsSource(query, 's');
  // Under `page==` one path, its rows' visitors are those of their first visit of the range
  // there: counted, not distinct-counted (firstVisitOfRange; at 10M pageviews under
  // page==/pricing the overview 2.15 -> 1.77 s on a slow host, BENCHMARKS.md run BT).
  const first = metrics.includes('visitors' as M) ? firstVisitOfRange(query, 's') : undefined;
  const metric = (name: M) =>
    name === 'visitors' && first !== undefined
      ? sql<number | string>`COUNT(CASE WHEN ${first} THEN 1 END)`
      : m[name];
  return d.builder
    .selectFrom(source.from as 'sessions as s')
    .select([...metrics.map((name) => out(d, name, metric(name)).as(name)), ...more])
    .where(where.sessions(query, 's', source));
}

/**
 * sessionTotals' statement (`out`: its aggregates as the report reads them, or as summed): from
 * the session rollups where decideTable picks them, else over the selected sessions.
 */
function sessionTotalsSelect<M extends SessionMetric>(
  d: SqlDialect,
  query: StatsQuery,
  metrics: readonly M[],
  out: AggregateOut = metricOut,
) {
  const table = decideTable(query, 'sessions', { metrics });
  if (table.rollupTable === 'session_attribute_rollups') {
    const r = sessionRollupMetrics('a');
    // Whole site days from the day rows, the quarter hours around them from the 15-minute rows.
    const parts = rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups').map(
      (part) =>
        d.builder
          .selectFrom(
            where.attributeRollupPart(part.query, part.table, 'a') as 'session_attribute_rollups as a',
          )
          .select(['a.sessions', 'a.bounces', 'a.session_pageviews', 'a.duration_seconds'])
          .where(where.sessionAttributeRollups(part.query, 'a')),
    );
    return d.builder
      .selectFrom(unionAllOf(parts).as('a'))
      .select(metrics.map((name) => out(d, name, r[name as keyof typeof r]).as(name)));
  }
  if (table.kind === 'rollup') {
    const r = sessionRollupMetrics('r');
    // Each session has exactly one value of each attribute: one attribute's rows add up to them
    // all. Whole site days from the day rows, the quarter hours around them from the 15-minute rows.
    const parts = rollupParts(query, 'session_rollups', 'session_day_rollups').map((part) =>
      d.builder
        .selectFrom(`${part.table} as r` as 'session_rollups as r')
        .select(['r.sessions', 'r.bounces', 'r.session_pageviews', 'r.duration_seconds'])
        .where(where.sessionRollups(part.query, table.rollupDimension ?? 'channel', 'r')),
    );
    return d.builder
      .selectFrom(unionAllOf(parts).as('r'))
      .select(metrics.map((name) => out(d, name, r[name as keyof typeof r]).as(name)));
  }
  return sessionTotalsOfSessions(d, query, metrics, [], out);
}

/** Statements several reports share; each report's own statements live in its *.queries.ts. */
export const sharedStatements = {
  /**
   * Session metrics of the query's sessions (by session start). Under `page!=` one path
   * (sessionPagesComplement), the site's totals from the session rollups less those of the
   * path's session_pages rows, in one statement (one moment).
   */
  sessionTotals<M extends SessionMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): ReportStatement<SessionTotals<M>> {
    const without = sessionPagesComplement(query, { metrics });
    if (without !== undefined) {
      const { site, page } = without;
      return (d) =>
        rowLess<SessionTotals<M>>(
          metrics,
          sessionTotalsSelect(d, site, metrics, asSummed),
          sessionTotalsSelect(d, page, metrics, asSummed),
          (name, difference) => metricOut(d, name, difference),
        ).compile(d.builder);
    }
    return (d) => sessionTotalsSelect(d, query, metrics).compile();
  },

  /**
   * sessionTotals' statement over the range's sessions (its last form) with the query's pageviews
   * beside (`pageviews`), where pageviewsBesideSessionTotals says they can be: the whole
   * sessions' pageviews summed from the rows it reads, the rest (pageviewsBeyondWholeSessions)
   * in the same statement, at the same moment. pageviewTotals reads those rows again (at 10M
   * pageviews under page==/pricing, 714k of them, each tested against dirty_sessions).
   */
  sessionTotalsWithPageviews<M extends SessionMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): ReportStatement<SessionTotals<M> & { pageviews: number | string }> {
    return (d) => {
      const sessions = sessionTotalsOfSessions(d, query, metrics, [
        wholeSessionsPageviews(query, 's').as('whole_pageviews'),
      ]);
      return sql<SessionTotals<M> & { pageviews: number | string }>`SELECT ${sql.join(
        metrics.map((name) => sql.ref(`t.${name}`)),
      )}, t.whole_pageviews + p.n AS pageviews
FROM (${sessions}) t
CROSS JOIN (SELECT COALESCE(SUM(u.n), 0) AS n FROM (${pageviewsBeyondWholeSessions(d, query)}) u) p`.compile(
        d.builder,
      );
    };
  },

  /** Pageview metrics of the query's pageviews (by their own ts). */
  pageviewTotals<M extends PageviewMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): ReportStatement<PageviewTotals<M>> {
    const table = decideTable(query, 'hits', { metrics });
    if (table.rollupTable === 'pageview_rollups') {
      return (d) =>
        d.builder
          .selectFrom(sql`${pageviewsByRollup(d, query, table.rollupDimension!)}`.as('p'))
          .select(sql<number | string>`COALESCE(SUM(p.n), 0)`.as('pageviews'))
          .compile();
    }
    if (table.kind === 'bySession') {
      return (d) =>
        d.builder
          .selectFrom(sql`${pageviewsBySession(d, query)}`.as('p'))
          .select(sql<number | string>`COALESCE(SUM(p.n), 0)`.as('pageviews'))
          .compile();
    }
    if (table.kind === 'rollup') {
      return (d) => {
        const r = pageviewRollupMetrics('r');
        return d.builder
          .selectFrom('hit_rollups as r')
          .select(metrics.map((name) => metricOut(d, name, r[name]).as(name)))
          .where(where.hitRollups(query, 'r'))
          .compile();
      };
    }
    return (d) => {
      const m = pageviewMetrics('h');
      return d.builder
        .selectFrom('hits as h')
        .select(metrics.map((name) => metricOut(d, name, m[name]).as(name)))
        .where(where.hits(query, 'h', 'pageview'))
        .compile();
    };
  },

  /** The site's data version (dataVersionColumns), read where the reports are read. */
  dataVersion(siteId: number): ReportStatement<DataVersionRow> {
    return (d) =>
      sql<DataVersionRow>`SELECT ${sql.raw(dataVersionColumns('s.id'))} FROM sites s WHERE s.id = ${siteId}`.compile(
        d.builder,
      );
  },

  /**
   * Hours of the range whose visitor sketch `aggregate` has yet to rebuild, or to merge the
   * sessions added to it with (0 when there are none; more than 0 otherwise, not a count).
   */
  pendingSketchHours(query: StatsQuery): ReportStatement<{ n: number | string }> {
    return (d) => {
      const hours = sql`site_id = ${query.site.id} AND bucket >= ${new Date(hourOf(query.range.startUtc))} AND bucket < ${query.range.endUtc}`;
      return sql<{ n: number }>`SELECT (SELECT COUNT(*) FROM dirty_sketch_hours WHERE ${hours})
        + EXISTS (SELECT 1 FROM dirty_sketch_sessions WHERE ${hours}) AS n`.compile(d.builder);
    };
  },

  /**
   * The day and hour sketches of a cover, registers as the engine reads a BLOB (blobOut): the site's, or under filters on one session attribute (visitorSketchesMayAnswer)
   * those of the values the filters select, whose merge is the sketch of their sessions.
   */
  visitorSketches(query: StatsQuery, cover: SketchCover): ReportStatement<StoredSketchRow> {
    const dimension = soleAttributeOf(query.filters);
    const grains = (eb: ExpressionBuilder<StatsDatabase, 'visitor_sketches'>) => {
      const grainIn = (grain: 'hour' | 'day', i: UtcInterval) =>
        eb.and([
          eb('grain', '=', grain),
          eb('bucket', '>=', new Date(i.start)),
          eb('bucket', '<', new Date(i.end)),
        ]);
      return eb.or([
        ...(cover.days ? [grainIn('day', cover.days)] : []),
        ...cover.hours.map((i) => grainIn('hour', i)),
      ]);
    };
    if (query.filters.length === 0) {
      return (d) =>
        d.builder
          .selectFrom('visitor_sketches')
          .select([
            'grain',
            'bucket',
            sql<string>`''`.as('value'),
            d.blobOut(sql.ref('registers')).as('registers'),
          ])
          .where('site_id', '=', query.site.id)
          .where(grains)
          .compile();
    }
    if (dimension === undefined) throw new Error('visitor sketches select sessions by one attribute only');
    return (d) =>
      d.builder
        .selectFrom('visitor_value_sketches as visitor_sketches')
        .select(['grain', 'bucket', 'value', d.blobOut(sql.ref('registers')).as('registers')])
        .where('site_id', '=', query.site.id)
        .where('dimension', '=', dimension)
        .where(grains)
        .where(rollupValueSelected(query.filters, sql.ref('value')) ?? sql<SqlBool>`1 = 1`)
        .compile();
  },

  /**
   * The day sketches by combination of attributes (visitor_combination_sketches) of the
   * combinations the request listed, over whole UTC days: their merge is the sketch of the
   * selected sessions that start in those days. Registers as visitorSketches reads them.
   */
  combinationSketches(query: StatsQuery, days: UtcInterval): ReportStatement<StoredSketchRow> {
    return (d) =>
      d.builder
        .selectFrom('visitor_combination_sketches as c')
        .select([
          sql<string>`'day'`.as('grain'),
          'c.bucket',
          sql<string>`HEX(c.attributes_hash)`.as('value'),
          d.blobOut(sql.ref('c.registers')).as('registers'),
        ])
        .where('c.site_id', '=', query.site.id)
        .where('c.bucket', '>=', new Date(days.start))
        .where('c.bucket', '<', new Date(days.end))
        .where(combinationSelected(query, 'c') ?? sql<SqlBool>`1 = 0`)
        .compile();
  },

  /** Visitor ids of the query's sessions starting in the ragged quarter hours of a range. */
  edgeVisitorIds(
    query: StatsQuery,
    intervals: readonly UtcInterval[],
  ): ReportStatement<{ visitor_id: string }> {
    return (d) =>
      d.builder
        .selectFrom('sessions as s')
        .select('s.visitor_id')
        .distinct()
        .where('s.site_id', '=', query.site.id)
        .where((eb) =>
          eb.or(
            intervals.map((i) =>
              eb.and([eb('s.started_at', '>=', new Date(i.start)), eb('s.started_at', '<', new Date(i.end))]),
            ),
          ),
        )
        // Where the request listed its combinations, the selected ones' sessions from
        // ix_sessions_site_combination alone, not every session of the intervals by key.
        .where(
          (selectsFewCombinations(query) ? combinationSelected(query, 's') : sessionSelected(query, 's')) ??
            sql<SqlBool>`1 = 1`,
        )
        .compile();
  },

  /**
   * The site's combinations of attributes that the scope's conditions on attributes select, at
   * most `limit` + 1 of them (none without such a condition).
   */
  selectedCombinations(scope: SessionScope, limit: number): ReportStatement<{ k: string }> {
    const selected = combinationsSelectedIn(scope) ?? sql<SqlBool>`1 = 0`;
    // As hex text: the same on every engine and reader.
    return (d) =>
      sql<{
        k: string;
      }>`SELECT HEX(fc.attributes_hash) AS k FROM attribute_combinations fc WHERE ${selected} LIMIT ${sql.lit(limit + 1)}`.compile(
        d.builder,
      );
  },

  /** The site's conversion goals, by id. */
  siteGoals(
    siteId: number,
  ): ReportStatement<{ id: number; type: 'event' | 'path'; match_value: string; name: string }> {
    return (d) =>
      d.builder
        .selectFrom('goals')
        .select(['id', 'name', 'type', 'match_value'])
        .where('site_id', '=', siteId)
        .orderBy('id')
        .compile();
  },

  /** The site's bound of its sessions' durations, as a DECIMAL string of seconds (no row: no session yet). */
  longestSession(siteId: number): ReportStatement<{ longest: string }> {
    return (d) =>
      d.builder
        .selectFrom('site_session_bounds')
        .select(d.decimalText(sql.ref('longest_seconds'), 3).as('longest'))
        .where('site_id', '=', siteId)
        .compile();
  },

  /**
   * How many sessions of the site are queued for `aggregate` (`queued`, counted up to
   * `queueLimit` + 1), and among them (when there are no more) whether a derived one has a
   * pageview under one of `pages` (whole paths or prefixes that page_key tells apart:
   * pagesOfCondition) that its rows in session_pages lack under them (`stale`): a hit imported
   * since it was last derived. Each queued session's hits are read by session.
   */
  stalePageRows(
    siteId: number,
    pages: readonly FilterValue[],
    queueLimit: number,
  ): ReportStatement<{ queued: number | string; stale: number | string | null }> {
    return (d) =>
      sql<{
        queued: number | string;
        stale: number | string | null;
      }>`SELECT COUNT(*) AS queued, MAX(CASE WHEN EXISTS (
          SELECT 1 FROM ${sql.raw(d.tableWithIndex('hits', 'h', HITS_BY_SESSION))}
          WHERE h.site_id = q.site_id AND h.session_id = q.session_id AND h.type = 'pageview' AND ${pageviewPathIsAny('h', pages)})
          AND EXISTS (SELECT 1 FROM sessions s WHERE s.site_id = q.site_id AND s.session_id = q.session_id)
          AND NOT EXISTS (SELECT 1 FROM ${sql.raw(d.tableWithIndex(SESSION_PAGES, 'sp', SESSION_PAGES_BY_SESSION))} WHERE sp.site_id = q.site_id AND sp.session_id = q.session_id AND ${pageKeyUnderAny('sp', pages)})
        THEN 1 ELSE 0 END) AS stale
        FROM (SELECT site_id, session_id FROM dirty_sessions WHERE site_id = ${siteId} LIMIT ${sql.lit(queueLimit + 1)}) q`.compile(
        d.builder,
      );
  },

  /**
   * The site's page_keys in session_pages under one of `pages`, at most `limit` + 1: one look-up a
   * key on MariaDB (a loose scan of the primary key's (site_id, page_key), as the GROUP BY names it).
   */
  prefixPageKeys(
    siteId: number,
    pages: readonly FilterValue[],
    limit: number,
  ): ReportStatement<{ page_key: string }> {
    return (d) =>
      sql<{
        page_key: string;
      }>`SELECT sp.site_id, sp.page_key FROM ${sql.raw(SESSION_PAGES)} sp WHERE sp.site_id = ${siteId} AND ${pageKeyUnderAny('sp', pages)} GROUP BY sp.site_id, sp.page_key ORDER BY sp.site_id, sp.page_key LIMIT ${sql.lit(limit + 1)}`.compile(
        d.builder,
      );
  },

  /** The goals the site's conversion rollups were built for (migration 1765500000000). */
  rolledUpGoals(siteId: number): ReportStatement<{ goal_id: number | string }> {
    return (d) =>
      d.builder
        .selectFrom('rolled_up_goals')
        .select('goal_id')
        .where('site_id', '=', siteId)
        .orderBy('goal_id')
        .compile();
  },
};

/** A site's goals, and whether the conversion rollups hold exactly these goals. */
export interface ConversionGoals {
  goals: SiteGoal[];
  /** rolled_up_goals names exactly `goals`: goal_rollups and converted_rollups may answer. */
  rolledUp: boolean;
}

export interface SiteGoal extends GoalDefinition {
  name: string;
}

/** Runs the shared statements and turns their rows into numbers. */
@Injectable()
export class StatsRepository {
  private readonly inflatedSketches = new InflatedSketches(INFLATED_SKETCH_BYTES);

  constructor(
    private readonly db: ReportDb,
    private readonly config: AppConfig,
  ) {}

  /**
   * `metrics` and `sessions` of the query's sessions, and their visitors (SPEC §1): where no
   * sketch can answer (filters on pages or goals, on several attributes whose combinations the
   * request did not list, one day, the raw path), one statement over the sessions, or under
   * conditions on attributes that a rollup answers, the rollup's counts and the visitors over
   * the sessions; otherwise the session counts from their rollup and the visitors as
   * decideVisitorCount says, exactly or from the visitor sketches (the site's, its values' or its
   * combinations').
   */
  async sessionTotalsAndVisitors<M extends SessionMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): Promise<Record<M | 'sessions' | 'visitors', number>> {
    const wanted = [...new Set<SessionMetric>([...metrics, 'sessions'])] as Array<M | 'sessions'>;
    if (!visitorSketchesMayAnswer(query)) {
      if (
        query.filters.length === 0 ||
        decideTable(query, 'sessions', { metrics: wanted }).kind !== 'rollup'
      ) {
        return this.sessionTotals(query, [...wanted, 'visitors']);
      }
      // Under conditions on attributes: the counts from the attribute rollup, the exact visitors
      // from the selected combinations' index alone (where.sessions), at once.
      const [totals, visitors] = await Promise.all([
        this.sessionTotals(query, wanted),
        this.sessionTotals(query, ['visitors']),
      ]);
      return { ...totals, ...visitors };
    }
    if (query.filters.length > 0) {
      // The estimate's choice reads the range's unfiltered sessions: beside the counts.
      const [totals, visitors] = await Promise.all([
        this.sessionTotals(query, wanted),
        this.visitorCount(query),
      ]);
      return { ...totals, visitors };
    }
    const totals = await this.sessionTotals(query, wanted);
    return { ...totals, visitors: await this.visitorCount(query, totals.sessions) };
  }

  /**
   * Distinct visitors of the query's `sessions` sessions: exact, or estimated within 1 %. An
   * exact count reads every session of the range, the filtered ones too, so under filters the
   * choice is made on the range's sessions.
   */
  private async visitorCount(query: StatsQuery, sessions?: number): Promise<number> {
    return (
      (await this.estimatedVisitors(query, sessions)) ??
      (await this.sessionTotals(query, ['visitors'])).visitors
    );
  }

  /**
   * The query's visitors estimated from the sketches, or undefined where they are to be counted
   * exactly (decideVisitorCount, or an hour still queued for its sketches). `sessions`: the
   * query's sessions, when the caller has them (unfiltered).
   */
  async estimatedVisitors(query: StatsQuery, sessions?: number): Promise<number | undefined> {
    if (!visitorSketchesMayAnswer(query)) return undefined;
    const read =
      query.filters.length === 0 && sessions !== undefined
        ? sessions
        : (await this.sessionTotals({ ...query, filters: [] }, ['sessions'])).sessions;
    if (decideVisitorCount(query, read, this.config.limits.visitorsExactUpTo) === 'exact') return undefined;
    // An hour aggregate re-derived and has not re-sketched yet: its sketch may miss visitors.
    const [pending] = await this.db.run(sharedStatements.pendingSketchHours(query));
    if (Number(pending.n) > 0) return undefined;
    const cover = sketchCover(query.range.startUtc.getTime(), query.range.endUtc.getTime());
    // By combination there are day sketches only: the hours around the whole days are read as
    // the ragged quarter hours are, the selected sessions' visitor ids.
    const byCombination = combinationSketchesMayAnswer(query);
    const edgeIntervals = byCombination ? [...cover.hours, ...cover.raw] : cover.raw;
    const [stored, edges] = await Promise.all([
      byCombination
        ? cover.days && query.combinations!.length > 0
          ? this.db.run(sharedStatements.combinationSketches(query, cover.days))
          : []
        : this.db.run(sharedStatements.visitorSketches(query, cover)),
      edgeIntervals.length > 0 ? this.db.run(sharedStatements.edgeVisitorIds(query, edgeIntervals)) : [],
    ]);
    const sketch = new VisitorSketch();
    const dimension = byCombination ? 'combination' : (soleAttributeOf(query.filters) ?? '');
    for (const row of stored) {
      const bucket = row.bucket instanceof Date ? row.bucket.getTime() : row.bucket;
      const rowKey = () =>
        `${query.site.id}\u0000${row.grain}\u0000${bucket}\u0000${dimension}\u0000${row.value}`;
      this.inflatedSketches.mergeRow(sketch, rowKey, row.registers);
    }
    for (const row of edges) sketch.add(row.visitor_id);
    return Math.round(sketch.estimate());
  }

  /**
   * sessionTotalsAndVisitors' figures and the query's pageviews (own ts in the range): where the
   * visitors are counted over the selected sessions themselves and the pageviews are read through
   * them (pageviewsBesideSessionTotals), in one statement that reads those sessions once
   * (sessionTotalsWithPageviews); otherwise the two reads side by side.
   */
  async sessionTotalsVisitorsAndPageviews<M extends SessionMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): Promise<Record<M | 'sessions' | 'visitors' | 'pageviews', number>> {
    // As sessionTotalsAndVisitors decides that its one statement over the sessions answers.
    const counted = [...new Set<SessionMetric>([...metrics, 'sessions'])] as Array<M | 'sessions'>;
    if (
      !visitorSketchesMayAnswer(query) &&
      decideTable(query, 'sessions', { metrics: counted }).kind !== 'rollup' &&
      pageviewsBesideSessionTotals(query)
    ) {
      const wanted = [...counted, 'visitors' as const];
      const [row] = await this.db.run(sharedStatements.sessionTotalsWithPageviews(query, wanted));
      return Object.fromEntries(
        [...wanted, 'pageviews' as const].map((name) => [name, Number(row[name])]),
      ) as Record<M | 'sessions' | 'visitors' | 'pageviews', number>;
    }
    const [totals, pageviews] = await Promise.all([
      this.sessionTotalsAndVisitors(query, metrics),
      this.pageviewTotals(query, ['pageviews']),
    ]);
    return { ...totals, pageviews: Number(pageviews.pageviews) };
  }

  async sessionTotals<M extends SessionMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): Promise<Record<M, number>> {
    const [row] = await this.db.run(sharedStatements.sessionTotals(query, metrics));
    return Object.fromEntries(metrics.map((name) => [name, Number(row[name])])) as Record<M, number>;
  }

  async pageviewTotals<M extends PageviewMetric>(
    query: StatsQuery,
    metrics: readonly M[],
  ): Promise<Record<M, string>> {
    const [row] = await this.db.run(sharedStatements.pageviewTotals(query, metrics));
    return Object.fromEntries(metrics.map((name) => [name, String(row[name])])) as Record<M, string>;
  }

  /** The site's data version (dataVersionColumns), read where the reports are read. */
  async dataVersion(siteId: number): Promise<string> {
    const [row] = await this.db.run(sharedStatements.dataVersion(siteId));
    return row ? formatDataVersion(row) : 'no site';
  }

  /**
   * The combinations of attributes the scope's conditions on attributes select (the hex text of
   * their hash), when they are at most LISTED_COMBINATIONS; else undefined.
   */
  async selectedCombinations(scope: SessionScope): Promise<string[] | undefined> {
    const rows = await this.db.run(sharedStatements.selectedCombinations(scope, LISTED_COMBINATIONS));
    if (rows.length > LISTED_COMBINATIONS) return undefined;
    return rows.map((r) => String(r.k).toLowerCase());
  }

  async siteGoals(siteId: number): Promise<SiteGoal[]> {
    const rows = await this.db.run(sharedStatements.siteGoals(siteId));
    return rows.map((r) => ({ id: Number(r.id), name: r.name, type: r.type, matchValue: r.match_value }));
  }

  /**
   * The longest duration of the site's derived sessions, in milliseconds (an upper bound:
   * site_session_bounds, migration 1768100000000); 0 while it has none.
   */
  async longestSessionMillis(siteId: number): Promise<number> {
    const [row] = await this.db.run(sharedStatements.longestSession(siteId));
    return row === undefined ? 0 : Number(toMillis(row.longest));
  }

  /**
   * Whether session_pages holds every derived session of the site that has a pageview under
   * one of `pages` (paths or prefixes: pagesOfCondition) under it (StatsQuery.pageRowsCurrent). A
   * session's rows are written with its row in `sessions`, and a session only gains hits: they
   * can lack a path only for a queued session, one of whose new hits is a pageview of it. A
   * queued session's figures are those of its row on either path; so while none lacks a row
   * under `page` that its hits have, its rows select what testing the hits selects.
   * With more than PAGE_CHECK_QUEUE sessions queued (a backlog), the request tests the hits
   * instead of reading them all first.
   */
  async pageRowsCurrent(
    siteId: number,
    pages: readonly FilterValue[],
    queueLimit = PAGE_CHECK_QUEUE,
  ): Promise<boolean> {
    const [row] = await this.db.run(sharedStatements.stalePageRows(siteId, pages, queueLimit));
    return Number(row.queued) <= queueLimit && Number(row.stale ?? 0) === 0;
  }

  /**
   * The page_keys of the site's session_pages rows under `pages` (StatsQuery.pageKeys), or
   * undefined past PREFIX_KEYS of them.
   */
  async prefixPageKeys(
    siteId: number,
    pages: readonly FilterValue[],
    limit = PREFIX_KEYS,
  ): Promise<string[] | undefined> {
    const rows = await this.db.run(sharedStatements.prefixPageKeys(siteId, pages, limit));
    return rows.length > limit ? undefined : rows.map((r) => r.page_key);
  }

  /** The site's goals for conversion counts, and whether the conversion rollups hold them. */
  async conversionGoals(siteId: number): Promise<ConversionGoals> {
    const goals = await this.siteGoals(siteId);
    const rolled = (await this.db.run(sharedStatements.rolledUpGoals(siteId))).map((r) => Number(r.goal_id));
    return {
      goals,
      rolledUp: rolled.length === goals.length && goals.every((g, i) => g.id === rolled[i]),
    };
  }
}
