import type { SqlDialect } from '@app/db';
import {
  Bucket,
  bucketIndex,
  col,
  decideTable,
  GoalDefinition,
  MISSING_ATTRIBUTE,
  orderMetrics,
  pageviewsByRollup,
  revenueByRollup,
  pageviewsBySession,
  ReportDb,
  ReportStatement,
  rollupParts,
  unionAllOf,
  convertedSessionsTable,
  conversionRollupsMayAnswer,
  conversionTail,
  storedConversionsMayAnswer,
  goalAttributeRollupsMayAnswer,
  ANY_GOAL,
  storedConvertedRows,
  sessionMetrics,
  sessionRollupMetrics,
  sessionsSource,
  sessionPagesComplement,
  PageComplement,
  StatsQuery,
  toCents,
  centsToNumber,
  where,
  metricOut,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { RawBuilder, SelectQueryBuilder, sql, SqlBool } from 'kysely';
import type { BreakdownDimension, BreakdownMetric } from './dto/breakdown.dto';

/** Per-series sums: `num` is the metric's count or money (exact decimal string), `den` its rate base. */
export interface SeriesSums {
  num: string;
  den: string;
}

export interface SeriesSumsByBucket {
  total: SeriesSums;
  /** Keyed by bucket index; buckets without rows are absent. */
  points: Map<number, SeriesSums>;
}

export interface BreakdownSums {
  /** Keyed by top value; `other` holds every remaining value. */
  top: Map<string, SeriesSumsByBucket>;
  other: SeriesSumsByBucket;
}

export interface BreakdownRequest {
  metric: BreakdownMetric;
  dimension: BreakdownDimension;
  goals: GoalDefinition[];
  /** The conversion rollups hold exactly `goals` (StatsRepository.conversionGoals). */
  goalsRolledUp?: boolean;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the three sources join different tables */
type AnySelect = SelectQueryBuilder<any, any, object>;

/**
 * Where a metric's rows come from. Session metrics read sessions by start; pageviews and
 * revenue read hits/orders by their own ts under their session's attribute. A pageview or
 * order whose session the aggregator has not derived yet reads the attribute as missing.
 */
interface MetricSource {
  rows: AnySelect;
  time: RawBuilder<unknown>;
  value: RawBuilder<string>;
  /** Per-row numerator and denominator. */
  num: RawBuilder<unknown>;
  den: RawBuilder<unknown>;
  /** The ranking volume over a group of rows. */
  volume: RawBuilder<unknown>;
  /**
   * Its rows may sum to nothing for a value (a difference: sessionsLessPath): a value ranks only
   * with a volume above 0, as one no selected session has is not among the rows at all.
   */
  differences?: boolean;
}

/**
 * conv_rate's source over a row set `(t, value, num, den)`: converted sessions in `num`,
 * sessions in `den`, summed per group (the sessions rank the values).
 */
function convertedAndSessions(d: SqlDialect, rows: RawBuilder<unknown>): MetricSource {
  return {
    rows: d.builder.selectFrom(rows.as('cr')) as AnySelect,
    time: sql`${col('cr', 't')}`,
    value: sql<string>`${col('cr', 'value')}`,
    num: sql`${col('cr', 'num')}`,
    den: sql`${col('cr', 'den')}`,
    volume: sql`SUM(${col('cr', 'den')})`,
  };
}

/** What the sessions and bounce_rate metrics need of the session tables (decideTable). */
function sessionNeeds(request: BreakdownRequest, buckets?: readonly Bucket[]) {
  return {
    metrics: request.metric === 'sessions' ? (['sessions'] as const) : (['sessions', 'bounces'] as const),
    dimension: request.dimension,
    buckets,
  };
}

/**
 * Whether `request`'s values are ranked and summed in one statement (rankedSeriesSums): its
 * metric is sessions or bounce_rate read from the selected sessions' own rows, not from a rollup
 * (under a page, entry or exit page or goal condition), and the request is not the raw path's,
 * which ranks them first (topValues) and sums their series after (seriesSums).
 */
export function ranksWithSeries(query: StatsQuery, request: BreakdownRequest, buckets: readonly Bucket[]) {
  if (query.tables === 'raw' || (request.metric !== 'sessions' && request.metric !== 'bounce_rate')) {
    return false;
  }
  return decideTable(query, 'sessions', sessionNeeds(request, buckets)).kind !== 'rollup';
}

/**
 * The report bucket of time `t`, for rows summed by bucket and value before a union (each group
 * at its earliest time, in the same bucket); undefined with one bucket or none, where they are
 * summed by value alone (SQLite reads a literal in GROUP BY as a column's place).
 */
function bucketKey(
  d: SqlDialect,
  buckets?: readonly Bucket[],
): ((t: RawBuilder<unknown>) => RawBuilder<unknown>) | undefined {
  return buckets === undefined || buckets.length < 2 ? undefined : (t) => bucketIndex(d, t, [...buckets]);
}

/**
 * Sessions or bounces by value and bucket under `page!=` one path (sessionPagesComplement): the
 * site's session rollup rows less the path's session_pages rows (each session's attribute and
 * start are on its rows), one row set summed per group. A (value, bucket)'s difference is the
 * sessions of it without the path; a value all of whose sessions had the path sums to 0
 * (`differences`).
 */
function sessionsLessPath(
  d: SqlDialect,
  without: PageComplement,
  request: BreakdownRequest,
  buckets?: readonly Bucket[],
): MetricSource {
  const site = metricSource(d, without.site, request, buckets);
  const path = metricSource(d, without.page, request, buckets);
  // The path's rows summed by report bucket and value first (a row of each group, at its
  // earliest time: in the same bucket), so the union MariaDB materialises holds a row per group,
  // not one per session (at 10M pageviews under page!=/pricing, 700k: 1.4-1.6 -> 0.8 s by hand).
  const byBucket = bucketKey(d, buckets);
  const byGroup = byBucket === undefined ? [path.value] : [byBucket(path.time), path.value];
  const rows = site.rows
    .select([site.time.as('t'), site.value.as('value'), site.num.as('num'), site.den.as('den')])
    .unionAll(
      path.rows
        .select([
          sql`MIN(${path.time})`.as('t'),
          path.value.as('value'),
          sql`0 - SUM(${path.num})`.as('num'),
          sql`0 - SUM(${path.den})`.as('den'),
        ])
        .groupBy(byGroup),
    );
  return {
    rows: d.builder.selectFrom(rows.as('x')) as AnySelect,
    time: sql`${col('x', 't')}`,
    value: sql<string>`${col('x', 'value')}`,
    num: sql`${col('x', 'num')}`,
    den: sql`${col('x', 'den')}`,
    volume: sql`SUM(${col('x', 'den')})`,
    differences: true,
  };
}

function metricSource(
  d: SqlDialect,
  query: StatsQuery,
  request: BreakdownRequest,
  buckets?: readonly Bucket[],
): MetricSource {
  const { metric, dimension, goals } = request;
  if (metric === 'sessions' || metric === 'bounce_rate') {
    const without = sessionPagesComplement(query, sessionNeeds(request, buckets));
    if (without !== undefined) return sessionsLessPath(d, without, request, buckets);
    const table = decideTable(query, 'sessions', sessionNeeds(request, buckets));
    if (table.rollupTable === 'session_pair_day_rollups') {
      // Sessions by another attribute than the one every condition is on, in day, week or month
      // buckets: the selected values' day rows of this attribute (the values are the items),
      // where the attribute rollup's day rows are read whole (at 10M 444,632 of them; sessions
      // by channel under one country 204.6 -> 13.4 ms, BENCHMARKS.md run AZ).
      const p = sessionRollupMetrics('p');
      return {
        rows: d.builder
          .selectFrom('session_pair_day_rollups as p')
          .where(where.sessionPairRollups(query, table.rollupDimension!, dimension, 'p')) as AnySelect,
        time: sql`${col('p', 'bucket')}`,
        value: sql<string>`${col('p', 'item')}`,
        num: sql`${col('p', 'sessions')}`,
        den: sql`${col('p', 'sessions')}`,
        volume: p.sessions,
      };
    }
    // Whole site days from the day rows where no report bucket starts inside one (days, weeks
    // and months in the site's zone), the rest from the 15-minute rows.
    if (table.rollupTable === 'session_attribute_rollups') {
      const a = sessionRollupMetrics('a');
      const parts = rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups', {
        buckets,
      }).map((part) =>
        // Each part summed by bucket and value first: MariaDB materialises the union, and a row per
        // combination of the five attributes (a VARCHAR(255) each) spills its in-memory temporary
        // tables at 10M pageviews (docs/decisions/filters.md).
        d.builder
          .selectFrom(
            where.attributeRollupPart(part.query, part.table, 'a') as 'session_attribute_rollups as a',
          )
          .select([
            'a.bucket',
            sql.ref(`a.${dimension}`).as('value'),
            a.sessions.as('sessions'),
            sql<number | string>`SUM(${col('a', 'bounces')})`.as('bounces'),
          ])
          .where(where.sessionAttributeRollups(part.query, 'a'))
          .groupBy(['a.bucket', sql.ref(`a.${dimension}`)]),
      );
      return {
        rows: d.builder.selectFrom(unionAllOf(parts).as('a')) as AnySelect,
        time: sql`${col('a', 'bucket')}`,
        value: sql<string>`${col('a', 'value')}`,
        num: sql`${col('a', metric === 'sessions' ? 'sessions' : 'bounces')}`,
        den: sql`${col('a', 'sessions')}`,
        volume: a.sessions,
      };
    }
    if (table.kind === 'rollup') {
      const r = sessionRollupMetrics('r');
      const parts = rollupParts(query, 'session_rollups', 'session_day_rollups', { buckets }).map((part) =>
        d.builder
          .selectFrom(`${part.table} as r` as 'session_rollups as r')
          .select(['r.bucket', 'r.value', 'r.sessions', 'r.bounces'])
          .where(where.sessionRollups(part.query, dimension, 'r')),
      );
      return {
        rows: d.builder.selectFrom(unionAllOf(parts).as('r')) as AnySelect,
        time: sql`${col('r', 'bucket')}`,
        value: sql<string>`${col('r', 'value')}`,
        num: sql`${col('r', metric === 'sessions' ? 'sessions' : 'bounces')}`,
        den: sql`${col('r', 'sessions')}`,
        volume: r.sessions,
      };
    }
  }
  const ofSession = sql<string>`COALESCE(${col('s', dimension)}, ${MISSING_ATTRIBUTE[dimension]})`;
  const sessionRows = (num: RawBuilder<unknown>, converted?: RawBuilder<unknown>): MetricSource => {
    decideTable(query, 'sessions');
    const source = sessionsSource(query, 's');
    const sessions = d.builder.selectFrom(source.from as 'sessions as s');
    const rows = converted
      ? sessions.leftJoin(sql`(${converted})`.as('c'), (j) =>
          j.on(sql<SqlBool>`c.session_id = ${sql.ref('s.session_id')}`),
        )
      : sessions;
    return {
      rows: rows.where(where.sessions(query, 's', source)) as AnySelect,
      time: sql`${col('s', 'started_at')}`,
      value: sql<string>`${col('s', dimension)}`,
      num,
      den: sql.lit(1),
      volume: sessionMetrics('s').sessions,
    };
  };
  switch (metric) {
    case 'sessions':
      return sessionRows(sql.lit(1));
    case 'bounce_rate':
      return sessionRows(sql`${col('s', 'is_bounce')}`);
    case 'conv_rate': {
      if (conversionRollupsMayAnswer(query, request.goalsRolledUp ?? false, buckets)) {
        // Sessions from the session rollup, converted ones from converted_rollups (the same
        // key), and the change the queued sessions bring: one row set, summed per group.
        // Whole site days from the day rows where no report bucket starts inside one.
        const sessions = rollupParts(query, 'session_rollups', 'session_day_rollups', { buckets }).map(
          (part) => sql`SELECT r.bucket AS t, r.value AS value, 0 AS num, r.sessions AS den
          FROM ${sql.table(part.table)} r WHERE ${where.sessionRollups(part.query, dimension, 'r')}`,
        );
        const converted = rollupParts(query, 'converted_rollups', 'converted_day_rollups', { buckets }).map(
          (part) => sql`SELECT c.bucket, c.value, c.sessions, 0
          FROM ${sql.table(part.table)} c WHERE ${where.sessionRollups(part.query, dimension, 'c')}`,
        );
        const rows = sql`(
          ${sql.join([...sessions, ...converted], sql` UNION ALL `)}
          UNION ALL
          SELECT x.started_at, ${sql.ref(`x.${dimension}`)}, x.converted, 0 FROM (${conversionTail(query, goals, { perGoal: false })}) x
        )`;
        return convertedAndSessions(d, rows);
      }
      // Under filters: the selected sessions as the sessions metric reads them (the attribute
      // rollups where they answer), and the converted ones from rollups or stored goals. Each
      // part is summed by report bucket and value before the union (a row of each group, at its
      // earliest time: in the same bucket), which MariaDB materialises with each VARCHAR(255)
      // at its full width: a row a session spilled the 64 MB in-memory temporary table (at 1M
      // under page==/pricing, 73k sessions: 1.2 s). With one bucket or none, by value alone
      // (SQLite reads a literal in GROUP BY as a column's place).
      const byBucket = bucketKey(d, buckets);
      const groups = (t: RawBuilder<unknown>, value: RawBuilder<unknown>) =>
        byBucket === undefined ? value : sql`${byBucket(t)}, ${value}`;
      const selected = () => {
        const m = metricSource(d, query, { ...request, metric: 'sessions' }, buckets);
        return sql`SELECT MIN(z.t) AS t, z.value, SUM(z.num) AS num, SUM(z.den) AS den FROM (${m.rows.select([
          m.time.as('t'),
          m.value.as('value'),
          sql.lit(0).as('num'),
          m.den.as('den'),
        ])}) z GROUP BY ${groups(sql.ref('z.t'), sql.ref('z.value'))}`;
      };
      if (goalAttributeRollupsMayAnswer(query, request.goalsRolledUp ?? false, buckets)) {
        // Conditions on attributes: the converted sessions of the selected combinations from
        // goal_attribute_rollups (whole site days from the day rows), plus the change the
        // queued sessions bring.
        const converted = rollupParts(query, 'goal_attribute_rollups', 'goal_attribute_day_rollups', {
          buckets,
        }).map(
          (part) => sql`SELECT c.bucket, ${sql.ref(`c.${dimension}`)}, c.sessions, 0
          FROM ${sql.table(part.table)} c WHERE c.goal_id = ${ANY_GOAL} AND ${where.sessionAttributeRollups(part.query, 'c')}`,
        );
        const rows = sql`(
          ${selected()}
          UNION ALL
          ${sql.join(converted, sql` UNION ALL `)}
          UNION ALL
          SELECT x.started_at, ${sql.ref(`x.${dimension}`)}, x.converted, 0 FROM (${conversionTail(query, goals, { perGoal: false })}) x
        )`;
        return convertedAndSessions(d, rows);
      }
      if (storedConversionsMayAnswer(query, request.goalsRolledUp ?? false)) {
        // Other conditions: the converted sessions from the settled sessions' stored goals and
        // the queued sessions' hits (storedConvertedRows). At 10M pageviews under country==US
        // the statement below, which joins every selected session of the range to its goal
        // hits, ran past the 10-s budget on every request (BENCHMARKS.md run AW).
        const converted = storedConvertedRows(query, goals, d.orderedJoin, {
          grouped: { value: dimension, key: byBucket },
          perGoal: false,
        });
        const rows = sql`(
          ${selected()}
          UNION ALL
          SELECT x.started_at, x.value, x.converted, 0 FROM (${converted}) x
        )`;
        return convertedAndSessions(d, rows);
      }
      // Converted: the session has a row among the sessions with a hit matching any goal.
      return sessionRows(
        sql`CASE WHEN c.session_id IS NULL THEN 0 ELSE 1 END`,
        convertedSessionsTable(goals, query),
      );
    }
    case 'pageviews': {
      const pageviews = decideTable(query, 'hits', { metrics: ['pageviews'], dimension, buckets });
      if (pageviews.rollupTable === 'pageview_rollups') {
        return {
          rows: d.builder.selectFrom(
            sql`${pageviewsByRollup(d, query, dimension, buckets)}`.as('p'),
          ) as AnySelect,
          time: sql`${col('p', 't')}`,
          value: sql<string>`${col('p', 'value')}`,
          num: sql`${col('p', 'n')}`,
          den: sql.lit(1),
          volume: sql`SUM(${col('p', 'n')})`,
        };
      }
      if (pageviews.kind === 'bySession') {
        return {
          rows: d.builder.selectFrom(
            sql`${pageviewsBySession(d, query, buckets, dimension)}`.as('p'),
          ) as AnySelect,
          time: sql`${col('p', 't')}`,
          value: sql<string>`${col('p', dimension)}`,
          num: sql`${col('p', 'n')}`,
          den: sql.lit(1),
          volume: sql`SUM(${col('p', 'n')})`,
        };
      }
      return {
        rows: d.builder
          .selectFrom('hits as h')
          .leftJoin('sessions as s', (j) =>
            j.onRef('s.site_id', '=', 'h.site_id').onRef('s.session_id', '=', 'h.session_id'),
          )
          .where(where.hits(query, 'h', 'pageview')) as AnySelect,
        time: sql`${col('h', 'ts')}`,
        value: ofSession,
        num: sql.lit(1),
        den: sql.lit(1),
        volume: sql`COUNT(*)`,
      };
    }
    case 'revenue': {
      const orders = decideTable(query, 'orders', { metrics: ['revenue'], dimension, buckets });
      if (orders.rollupTable === 'revenue_rollups') {
        return {
          rows: d.builder.selectFrom(
            sql`${revenueByRollup(d, query, dimension, buckets)}`.as('p'),
          ) as AnySelect,
          time: sql`${col('p', 't')}`,
          value: sql<string>`${col('p', 'value')}`,
          num: sql`${col('p', 'n')}`,
          den: sql.lit(1),
          volume: sql`COALESCE(SUM(${col('p', 'n')}), 0)`,
        };
      }
      return {
        rows: d.builder
          .selectFrom('orders as o')
          .leftJoin('sessions as s', (j) =>
            j.onRef('s.site_id', '=', 'o.site_id').onRef('s.session_id', '=', 'o.session_id'),
          )
          .where(where.orders(query, 'o')) as AnySelect,
        time: sql`${col('o', 'ts')}`,
        value: ofSession,
        num: sql`${col('o', 'revenue')}`,
        den: sql.lit(1),
        volume: orderMetrics('o').revenue,
      };
    }
  }
}

export const breakdownStatements = {
  /** The `limit` values with the largest volume base over the range, ties by value asc. */
  topValues(query: StatsQuery, request: BreakdownRequest, limit: number): ReportStatement<{ value: string }> {
    return (d) => {
      // conv_rate ranks by sessions (SPEC §4, the volume base), which every one of its sources
      // counts as the sessions metric's rows do: those rank it without the converted sessions.
      const m = metricSource(
        d,
        query,
        request.metric === 'conv_rate' ? { ...request, metric: 'sessions' } : request,
      );
      const groups = m.rows.select([m.value.as('value'), m.volume.as('volume')]).groupBy(sql.lit(1));
      return d.builder
        .selectFrom((m.differences ? groups.having(m.volume, '>', 0) : groups).as('g'))
        .select('g.value')
        .orderBy('g.volume', 'desc')
        .orderBy('g.value', 'asc')
        .limit(limit)
        .compile();
    };
  },

  /** Numerator and denominator per (series, bucket): each top value, and "Other" for the rest. */
  seriesSums(
    query: StatsQuery,
    request: BreakdownRequest,
    top: string[],
    buckets: Bucket[],
  ): ReportStatement<{ is_other: number | string; series: string; b: number | string } & SeriesSums> {
    return (d) => {
      const m = metricSource(d, query, request, buckets);
      const inTop = top.length === 0 ? sql`(1 = 0)` : sql`${m.value} IN (${sql.join(top)})`;
      const rows = m.rows
        .select([
          sql`CASE WHEN ${inTop} THEN 0 ELSE 1 END`.as('is_other'),
          sql`CASE WHEN ${inTop} THEN ${m.value} ELSE '' END`.as('series'),
          bucketIndex(d, m.time, buckets).as('b'),
          m.num.as('num'),
          m.den.as('den'),
        ])
        .as('t');
      return d.builder
        .selectFrom(rows)
        .select([
          't.is_other',
          't.series',
          't.b',
          metricOut(d, request.metric, sql`SUM(t.num)`).as('num'),
          sql`SUM(t.den)`.as('den'),
        ])
        .groupBy(['t.is_other', 't.series', 't.b'])
        .compile();
    };
  },

  /**
   * topValues and seriesSums in one statement, where the metric reads the selected sessions'
   * own rows (ranksWithSeries): those rows are read once, summed by value and bucket, and each
   * value ranked by its volume over every bucket, then by value asc (as topValues ranks them:
   * `rk`, the top `limit` series' rank); the values past the top `limit` are summed as "Other".
   * At 1M pageviews under page==/pricing the two statements took 41-105 and 94-143 ms, one after
   * the other.
   */
  rankedSeriesSums(
    query: StatsQuery,
    request: BreakdownRequest,
    limit: number,
    buckets: Bucket[],
  ): ReportStatement<
    { is_other: number | string; series: string; b: number | string; rk: number | string } & SeriesSums
  > {
    return (d) => {
      const m = metricSource(d, query, request, buckets);
      const groups = m.rows
        .select([
          m.value.as('value'),
          bucketIndex(d, m.time, buckets).as('b'),
          sql`SUM(${m.num})`.as('num'),
          sql`SUM(${m.den})`.as('den'),
          m.volume.as('volume'),
        ])
        .groupBy([sql.lit(1), sql.lit(2)])
        .as('g');
      const totals = d.builder
        .selectFrom(groups)
        .select([
          'g.value',
          'g.b',
          'g.num',
          'g.den',
          sql`SUM(${sql.ref('g.volume')}) OVER (PARTITION BY ${sql.ref('g.value')})`.as('total'),
        ])
        .as('t');
      const ranked = d.builder
        .selectFrom(totals)
        .$if(m.differences === true, (q) => q.where(sql.ref('t.total'), '>', 0))
        .select([
          't.value',
          't.b',
          't.num',
          't.den',
          sql<number>`DENSE_RANK() OVER (ORDER BY ${sql.ref('t.total')} DESC, ${sql.ref('t.value')} ASC)`.as(
            'rk',
          ),
        ])
        .as('k');
      const inTop = sql`${sql.ref('k.rk')} <= ${limit}`;
      const rows = d.builder
        .selectFrom(ranked)
        .select([
          sql`CASE WHEN ${inTop} THEN 0 ELSE 1 END`.as('is_other'),
          sql`CASE WHEN ${inTop} THEN ${sql.ref('k.value')} ELSE '' END`.as('series'),
          'k.b',
          'k.rk',
          'k.num',
          'k.den',
        ])
        .as('r');
      return d.builder
        .selectFrom(rows)
        .select([
          'r.is_other',
          'r.series',
          'r.b',
          sql<number | string>`MIN(${sql.ref('r.rk')})`.as('rk'),
          metricOut(d, request.metric, sql`SUM(r.num)`).as('num'),
          sql`SUM(r.den)`.as('den'),
        ])
        .groupBy(['r.is_other', 'r.series', 'r.b'])
        .compile();
    };
  },
};
/* eslint-enable @typescript-eslint/no-explicit-any */

const ZERO: SeriesSums = { num: '0', den: '0' };

/** Exact sum of two non-negative decimal strings of at most 2 decimals (counts or money). */
function add(a: string, b: string): string {
  return String(centsToNumber(toCents(a) + toCents(b)));
}

@Injectable()
export class BreakdownQueries {
  constructor(private readonly db: ReportDb) {}

  async topValues(query: StatsQuery, request: BreakdownRequest, limit: number): Promise<string[]> {
    const rows = await this.db.run(breakdownStatements.topValues(query, request, limit));
    return rows.map((r) => r.value);
  }

  /** Sums per series and bucket; a series' total is the exact sum of its buckets. */
  async seriesSums(
    query: StatsQuery,
    request: BreakdownRequest,
    top: string[],
    buckets: Bucket[],
  ): Promise<BreakdownSums> {
    return sumsBySeries(await this.db.run(breakdownStatements.seriesSums(query, request, top, buckets)), top);
  }

  /**
   * The top `limit` values in rank order, and their sums and Other's: from one statement
   * (rankedSeriesSums) where ranksWithSeries says so, else topValues then seriesSums.
   */
  async topSeriesSums(
    query: StatsQuery,
    request: BreakdownRequest,
    limit: number,
    buckets: Bucket[],
  ): Promise<{ top: string[]; sums: BreakdownSums }> {
    if (ranksWithSeries(query, request, buckets))
      return this.rankedSeriesSums(query, request, limit, buckets);
    const top = await this.topValues(query, request, limit);
    return { top, sums: await this.seriesSums(query, request, top, buckets) };
  }

  /** topValues and seriesSums from rankedSeriesSums' one statement. */
  async rankedSeriesSums(
    query: StatsQuery,
    request: BreakdownRequest,
    limit: number,
    buckets: Bucket[],
  ): Promise<{ top: string[]; sums: BreakdownSums }> {
    const rows = await this.db.run(breakdownStatements.rankedSeriesSums(query, request, limit, buckets));
    const rank = new Map<string, number>();
    for (const row of rows) if (Number(row.is_other) === 0) rank.set(row.series, Number(row.rk));
    const top = [...rank.keys()].sort((a, b) => rank.get(a)! - rank.get(b)!);
    return { top, sums: sumsBySeries(rows, top) };
  }
}

/** The rows of seriesSums (or rankedSeriesSums) by series: each top value's, and Other's. */
function sumsBySeries(
  rows: ReadonlyArray<{ is_other: number | string; series: string; b: number | string } & SeriesSums>,
  top: string[],
): BreakdownSums {
  const sums: BreakdownSums = {
    top: new Map(top.map((v) => [v, { total: ZERO, points: new Map() }])),
    other: { total: ZERO, points: new Map() },
  };
  for (const row of rows) {
    const target = Number(row.is_other) === 1 ? sums.other : sums.top.get(row.series);
    if (!target) continue;
    const value = { num: String(row.num), den: String(row.den) };
    target.points.set(Number(row.b), value);
    target.total = { num: add(target.total.num, value.num), den: add(target.total.den, value.den) };
  }
  return sums;
}
