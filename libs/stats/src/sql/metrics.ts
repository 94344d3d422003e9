import type { DecimalScale, SqlDialect } from '@app/db/dialect';
import { Expression, RawBuilder, sql } from 'kysely';
import { col } from './col';

/**
 * The SPEC §1 metrics as SQL aggregates, each defined once per source table. Counts come back
 * as numbers or numeric strings, sums of DECIMAL columns as exact decimal strings. Rates and
 * averages are derived from these sums in definitions.ts, never stored or summed.
 */
export type Aggregate = RawBuilder<number | string>;

/** Over rows of `sessions` (alias `s`): the sessions themselves. */
export const sessionMetrics = (s = 's') => ({
  sessions: sql<number | string>`COUNT(*)`,
  /** Distinct visitor ids over the sessions (SPEC §1 "Visitors"). */
  visitors: sql<number | string>`COUNT(DISTINCT ${col(s, 'visitor_id')})`,
  bounces: sql<number | string>`COALESCE(SUM(${col(s, 'is_bounce')}), 0)`,
  /** Pageviews of these sessions, wherever those pageviews fall: the numerator of pages per session. */
  sessionPageviews: sql<number | string>`COALESCE(SUM(${col(s, 'pageviews')}), 0)`,
  durationSeconds: sql<number | string>`COALESCE(SUM(${col(s, 'duration_seconds')}), 0)`,
});
export type SessionMetric = keyof ReturnType<typeof sessionMetrics>;

/** The same session metrics over rows of `session_rollups` (alias `r`): sums of stored counts. */
export const sessionRollupMetrics = (r = 'r') => ({
  sessions: sql<number | string>`COALESCE(SUM(${col(r, 'sessions')}), 0)`,
  bounces: sql<number | string>`COALESCE(SUM(${col(r, 'bounces')}), 0)`,
  sessionPageviews: sql<number | string>`COALESCE(SUM(${col(r, 'session_pageviews')}), 0)`,
  durationSeconds: sql<number | string>`COALESCE(SUM(${col(r, 'duration_seconds')}), 0)`,
});

/** The scroll-depth buckets of the engagement report: deepest % scrolled, inclusive bounds. */
export const SCROLL_DEPTH_BUCKETS = [
  { label: '0-24', min: 0, max: 24, column: 'scroll_0_24' },
  { label: '25-49', min: 25, max: 49, column: 'scroll_25_49' },
  { label: '50-74', min: 50, max: 74, column: 'scroll_50_74' },
  { label: '75-100', min: 75, max: 100, column: 'scroll_75_100' },
] as const;

/** Over rows of `hits` that are pageviews (alias `h`). */
export const pageviewMetrics = (h = 'h') => ({
  pageviews: sql<number | string>`COUNT(*)`,
  /** Σ time_on_page_seconds over the pageviews that carry one, and how many do. */
  timeOnPageSum: sql<number | string>`COALESCE(SUM(${col(h, 'time_on_page_seconds')}), 0)`,
  timedPageviews: sql<number | string>`COUNT(${col(h, 'time_on_page_seconds')})`,
});

export type PageviewMetric = keyof ReturnType<typeof pageviewMetrics>;

/** Over rows of `hits` of any type (alias `h`): the live window of the realtime report. */
export const hitMetrics = (h = 'h') => ({
  /** Distinct visitor ids among the hits (SPEC §1 "Visitors", over hits rather than sessions). */
  visitors: sql<number | string>`COUNT(DISTINCT ${col(h, 'visitor_id')})`,
});

/** Pageviews per scroll-depth bucket, in SCROLL_DEPTH_BUCKETS order (pageviews without one count nowhere). */
export const scrollDepthCounts = (h = 'h'): Aggregate[] =>
  SCROLL_DEPTH_BUCKETS.map(
    (b) =>
      sql<
        number | string
      >`COALESCE(SUM(${col(h, 'scroll_depth')} BETWEEN ${sql.lit(b.min)} AND ${sql.lit(b.max)}), 0)`,
  );

/** The same pageview metrics over rows of `hit_rollups` (alias `r`): sums of stored counts. */
export const pageviewRollupMetrics = (r = 'r') => ({
  pageviews: sql<number | string>`COALESCE(SUM(${col(r, 'pageviews')}), 0)`,
  timeOnPageSum: sql<number | string>`COALESCE(SUM(${col(r, 'time_on_page_seconds')}), 0)`,
  timedPageviews: sql<number | string>`COALESCE(SUM(${col(r, 'timed_pageviews')}), 0)`,
});

/** scrollDepthCounts over rows of `hit_rollups`. */
export const scrollDepthRollupCounts = (r = 'r'): Aggregate[] =>
  SCROLL_DEPTH_BUCKETS.map((b) => sql<number | string>`COALESCE(SUM(${col(r, b.column)}), 0)`);

/** Over rows of `order_items` (alias `i`). */
export const itemMetrics = (i = 'i') => ({
  quantity: sql<number | string>`SUM(${col(i, 'quantity')})`,
  /** quantity × price summed, exact DECIMAL. */
  revenue: sql<string>`SUM(${col(i, 'quantity')} * ${col(i, 'price')})`,
  orders: sql<number | string>`COUNT(DISTINCT ${col(i, 'order_id')})`,
});

/** Over rows of `orders` (alias `o`), already one row per order (SPEC §1 "Order"). */
export const orderMetrics = (o = 'o') => ({
  orders: sql<number | string>`COUNT(*)`,
  /** The exact DECIMAL sum; `0.00`-like when there are none. */
  revenue: sql<string>`COALESCE(SUM(${col(o, 'revenue')}), 0)`,
  /** Σ item quantities of the orders (`items_sold`). */
  itemsSold: sql<
    number | string
  >`COALESCE(SUM((SELECT ${itemMetrics('i').quantity} FROM order_items i WHERE i.site_id = ${col(o, 'site_id')} AND i.order_id = ${col(o, 'order_id')})), 0)`,
});

/**
 * The same order metrics over rows of `order_rollups` (alias `r`), which hold them per
 * 15-minute bucket of the order ts (libs/stats/src/rollups/order-rollup.ts).
 */
export const orderRollupMetrics = (r = 'r') => ({
  orders: sql<number | string>`COALESCE(SUM(${col(r, 'orders')}), 0)`,
  revenue: sql<string>`COALESCE(SUM(${col(r, 'revenue')}), 0)`,
  itemsSold: sql<number | string>`COALESCE(SUM(${col(r, 'items')}), 0)`,
});

/** The item metrics over rows of `item_rollups` or `item_day_rollups` (alias `r`), per sku. */
export const itemRollupMetrics = (r = 'r') => ({
  quantity: sql<number | string>`SUM(${col(r, 'quantity')})`,
  revenue: sql<string>`SUM(${col(r, 'revenue')})`,
  /** Each order lies in one bucket: its distinct count per bucket adds up. */
  orders: sql<number | string>`SUM(${col(r, 'orders')})`,
});

/** The metrics that are exact decimals (SPEC §1 money and seconds), with their scale. */
const DECIMAL_METRICS: Partial<Record<string, DecimalScale>> = {
  durationSeconds: 3,
  timeOnPageSum: 3,
  revenue: 2,
};

/**
 * A metric's aggregate as a report reads it: exact decimals as their decimal string
 * (SqlDialect.decimalText), everything else as it is. Only where the value leaves SQL.
 */
export function metricOut(d: SqlDialect, name: string, aggregate: Aggregate): Aggregate {
  const scale = DECIMAL_METRICS[name];
  return scale === undefined ? aggregate : d.decimalText(aggregate, scale);
}

/**
 * How a statement gives an aggregate: as the report reads it (metricOut), or as summed
 * (asSummed), for a statement that computes on it first (the site's less a path's).
 */
export type AggregateOut = (d: SqlDialect, name: string, aggregate: Aggregate) => Aggregate;
export const asSummed: AggregateOut = (_d, _name, aggregate) => aggregate;

/**
 * One row of `site`'s `columns` less `page`'s, each a one-row statement with those columns as
 * summed (asSummed), each difference as `out` gives it (metricOut where a column is a metric):
 * a `page!=` query's figures from the site's and the path's (sessionPagesComplement), in one
 * statement, so at one moment.
 */
export function rowLess<R>(
  columns: readonly string[],
  site: Expression<unknown>,
  page: Expression<unknown>,
  out: (column: string, difference: Aggregate) => Aggregate = (_column, difference) => difference,
): RawBuilder<R> {
  const less = (c: string) =>
    sql`${out(c, sql<number | string>`${sql.ref(`a.${c}`)} - ${sql.ref(`b.${c}`)}`)} AS ${sql.ref(c)}`;
  return sql<R>`SELECT ${sql.join(columns.map(less))}
FROM (${site}) a
CROSS JOIN (${page}) b`;
}
