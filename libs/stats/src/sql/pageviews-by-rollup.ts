import type { SqlDialect } from '@app/db';
import { RawBuilder, sql } from 'kysely';
import { hitsOfSession } from '../conversions';
import { attributeOrMissing, SessionAttribute } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { col } from './col';
import { andAlso, sessionSelected } from './session-filter';
import { joinPageviewSession } from './pageviews-by-session';
import { where } from './where';
import { tableWithIndexMarker } from '@app/db/dialect';
import type { Bucket } from '../date-range';
import { rollupParts } from '../rollups/day-split';

/**
 * A rollup of rows stamped with their own ts under their session's attributes
 * (libs/stats/src/rollups/session-bucket-rollup.ts), and where its source rows are.
 */
interface SessionBucketRollupRead {
  rollup: 'pageview_rollups' | 'revenue_rollups';
  /** The same by the site's day (docs/decisions/rollups.md, "Day rows by the site's day"). */
  dayRollup: 'pageview_day_rollups' | 'revenue_day_rollups';
  store: 'session_pageview_buckets' | 'session_order_buckets';
  /** The summed column read, in the rollup and the store. */
  column: string;
  /** The source rows, aliased `h` (site_id, session_id, ts), and a condition on them. */
  rows: RawBuilder<unknown>;
  only: RawBuilder<unknown>;
  /** A source row's own value of the column. */
  value: RawBuilder<unknown>;
}

/**
 * The query's rows of a session-bucket rollup as `(t, value, n)` of one session attribute
 * (when decideTable picks it: no filters, or filters on `dimension` only, over whole quarter
 * hours): `n` in the bucket starting at `t` whose session has `value`. The sessions queued for
 * aggregation are read raw on top: their source rows of the range as they are now, under the
 * attribute the raw path gives them (their row's, or the missing word; under filters only those
 * of a selected row), minus what the rollup holds for them (their stored buckets under their
 * row's attribute). Exact: test/parity.e2e-spec.ts.
 */
function bySessionBucketRollup(
  d: SqlDialect,
  query: StatsQuery,
  dimension: SessionAttribute,
  r: SessionBucketRollupRead,
  buckets?: readonly Bucket[],
): RawBuilder<unknown> {
  const site = query.site.id;
  const { startUtc, endUtc } = query.range;
  const queued = sql`SELECT q.session_id FROM dirty_sessions q WHERE q.site_id = ${site}`;
  // Whole site days from the day rows where no report bucket starts inside one.
  const rolledUp = rollupParts(query, r.rollup, r.dayRollup, { buckets }).map(
    (part) =>
      sql`SELECT r.bucket AS t, r.value AS value, ${sql.ref(`r.${r.column}`)} AS n FROM ${sql.table(part.table)} r
    WHERE ${where.sessionRollups(part.query, dimension, 'r')}`,
  );
  return sql`(
    ${sql.join(rolledUp, sql` UNION ALL `)}
    UNION ALL
    SELECT h.ts, ${attributeOrMissing(dimension, col('ps', dimension))}, ${r.value} FROM ${r.rows}
    ${joinPageviewSession(d, query)}
    WHERE h.site_id = ${site} AND h.session_id IN (${queued})${r.only} AND h.ts >= ${startUtc} AND h.ts < ${endUtc}
    UNION ALL
    SELECT b.bucket, ${col('s', dimension)}, -${sql.ref(`b.${r.column}`)} FROM ${sql.table(r.store)} b
    JOIN sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id${andAlso(sessionSelected(query, 's'))}
    WHERE b.site_id = ${site} AND b.session_id IN (${queued}) AND b.bucket >= ${startUtc} AND b.bucket < ${endUtc}
  )`;
}

/** The query's pageviews by one session attribute from pageview_rollups (bySessionBucketRollup). */
export function pageviewsByRollup(
  d: SqlDialect,
  query: StatsQuery,
  dimension: SessionAttribute,
  buckets?: readonly Bucket[],
): RawBuilder<unknown> {
  return bySessionBucketRollup(
    d,
    query,
    dimension,
    {
      rollup: 'pageview_rollups',
      dayRollup: 'pageview_day_rollups',
      store: 'session_pageview_buckets',
      column: 'pageviews',
      rows: sql`${hitsOfSession('h')}`,
      only: sql` AND h.type = 'pageview'`,
      value: sql`1`,
    },
    buckets,
  );
}

/**
 * The query's order revenue by one session attribute from revenue_rollups
 * (bySessionBucketRollup): `n` is revenue in the stored form (exact; cents on SQLite).
 */
export function revenueByRollup(
  d: SqlDialect,
  query: StatsQuery,
  dimension: SessionAttribute,
  buckets?: readonly Bucket[],
): RawBuilder<unknown> {
  return bySessionBucketRollup(
    d,
    query,
    dimension,
    {
      rollup: 'revenue_rollups',
      dayRollup: 'revenue_day_rollups',
      store: 'session_order_buckets',
      column: 'revenue',
      rows: sql.raw(tableWithIndexMarker('orders', 'h', 'ix_orders_site_session')),
      only: sql``,
      value: sql`h.revenue`,
    },
    buckets,
  );
}
