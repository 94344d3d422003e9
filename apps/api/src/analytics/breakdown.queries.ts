import {
  Bucket,
  bucketIndexSql,
  GoalDefinition,
  MISSING_ATTRIBUTE,
  orderRevenueSql,
  ordersInRangeSql,
  ReportDb,
  ReportRange,
  sessionConvertedSql,
  SqlFragment,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
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

/**
 * Where a metric's rows come from. Session metrics read sessions by start; pageviews and
 * revenue read hits/orders by their own ts under their session's attribute. A pageview or
 * order whose session the aggregator has not derived yet reads the attribute as missing.
 */
interface MetricSource {
  from: string;
  where: (siteId: number, range: ReportRange) => SqlFragment;
  time: string;
  value: (dimension: BreakdownDimension) => string;
  /** Per-row numerator and denominator. */
  num: SqlFragment;
  den: string;
  /** The ranking volume over a group of rows. */
  volume: string;
}

const ZERO: SeriesSums = { num: '0', den: '0' };

@Injectable()
export class BreakdownQueries {
  constructor(private readonly db: ReportDb) {}

  async siteGoals(siteId: number): Promise<GoalDefinition[]> {
    const rows = await this.db.select<{ id: number; type: 'event' | 'path'; match_value: string }>(
      'SELECT id, type, match_value FROM goals WHERE site_id = ? ORDER BY id',
      [siteId],
    );
    return rows.map((r) => ({ id: Number(r.id), type: r.type, matchValue: r.match_value }));
  }

  /** The `limit` values with the largest volume base over the range, ties by value asc. */
  async topValues(
    siteId: number,
    range: ReportRange,
    metric: BreakdownMetric,
    dimension: BreakdownDimension,
    limit: number,
    goals: GoalDefinition[],
  ): Promise<string[]> {
    const m = metricSource(metric, goals);
    const where = m.where(siteId, range);
    const rows = await this.db.select<{ value: string }>(
      `SELECT g.value FROM (
         SELECT ${m.value(dimension)} AS value, ${m.volume} AS volume
         FROM ${m.from} WHERE ${where.sql} GROUP BY 1
       ) g ORDER BY g.volume DESC, g.value ASC LIMIT ?`,
      [...where.params, limit],
    );
    return rows.map((r) => r.value);
  }

  /**
   * Numerator and denominator per (series, bucket) and per series over the whole range, in one
   * pass: WITH ROLLUP adds each series' total row (bucket NULL), so money is summed by MariaDB.
   */
  async seriesSums(
    siteId: number,
    range: ReportRange,
    metric: BreakdownMetric,
    dimension: BreakdownDimension,
    top: string[],
    buckets: Bucket[],
    goals: GoalDefinition[],
  ): Promise<BreakdownSums> {
    const m = metricSource(metric, goals);
    const value = m.value(dimension);
    const bucket = bucketIndexSql(this.db.dialect, m.time, buckets);
    const where = m.where(siteId, range);
    const inTop = top.length === 0 ? '(1 = 0)' : `${value} IN (${top.map(() => '?').join(', ')})`;
    const rows = await this.db.select<
      { is_other: number | null; series: string | null; b: number | null } & SeriesSums
    >(
      `SELECT t.is_other, t.series, t.b, SUM(t.num) AS num, SUM(t.den) AS den FROM (
         SELECT CASE WHEN ${inTop} THEN 0 ELSE 1 END AS is_other,
           CASE WHEN ${inTop} THEN ${value} ELSE '' END AS series,
           ${bucket.sql} AS b, ${m.num.sql} AS num, ${m.den} AS den
         FROM ${m.from} WHERE ${where.sql}
       ) t GROUP BY t.is_other, t.series, t.b WITH ROLLUP`,
      [...top, ...top, ...bucket.params, ...m.num.params, ...where.params],
    );
    const sums: BreakdownSums = {
      top: new Map(top.map((v) => [v, { total: ZERO, points: new Map() }])),
      other: { total: ZERO, points: new Map() },
    };
    for (const row of rows) {
      if (row.is_other === null || row.series === null) continue;
      const target = Number(row.is_other) === 1 ? sums.other : sums.top.get(row.series);
      if (!target) continue;
      const value = { num: String(row.num), den: String(row.den) };
      if (row.b === null) target.total = value;
      else target.points.set(Number(row.b), value);
    }
    return sums;
  }
}

function metricSource(metric: BreakdownMetric, goals: GoalDefinition[]): MetricSource {
  const sessions = (num: SqlFragment): MetricSource => ({
    from: 'sessions s',
    where: (siteId, range) => ({
      sql: 's.site_id = ? AND s.started_at >= ? AND s.started_at < ?',
      params: [siteId, range.startUtc, range.endUtc],
    }),
    time: 's.started_at',
    value: (dimension) => `s.${dimension}`,
    num,
    den: '1',
    volume: 'COUNT(*)',
  });
  const ofSession = (dimension: BreakdownDimension) =>
    `COALESCE(s.${dimension}, '${MISSING_ATTRIBUTE[dimension]}')`;
  switch (metric) {
    case 'sessions':
      return sessions({ sql: '1', params: [] });
    case 'bounce_rate':
      return sessions({ sql: 's.is_bounce', params: [] });
    case 'conv_rate': {
      const converted = sessionConvertedSql('s', goals);
      return sessions({ sql: `CASE WHEN ${converted.sql} THEN 1 ELSE 0 END`, params: converted.params });
    }
    case 'pageviews':
      return {
        from: 'hits h LEFT JOIN sessions s ON s.site_id = h.site_id AND s.session_id = h.session_id',
        where: (siteId, range) => ({
          sql: "h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts < ?",
          params: [siteId, range.startUtc, range.endUtc],
        }),
        time: 'h.ts',
        value: ofSession,
        num: { sql: '1', params: [] },
        den: '1',
        volume: 'COUNT(*)',
      };
    case 'revenue':
      return {
        from: 'orders o LEFT JOIN sessions s ON s.site_id = o.site_id AND s.session_id = o.session_id',
        where: (siteId, range) => ordersInRangeSql('o', siteId, range),
        time: 'o.ts',
        value: ofSession,
        num: { sql: 'o.revenue', params: [] },
        den: '1',
        volume: orderRevenueSql('o'),
      };
  }
}
