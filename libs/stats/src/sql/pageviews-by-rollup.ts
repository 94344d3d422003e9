import { RawBuilder, sql } from 'kysely';
import { hitsOfSession } from '../conversions';
import { attributeOrMissing, SessionAttribute } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { col } from './col';
import { andAlso, sessionSelected } from './session-filter';
import { joinPageviewSession } from './pageviews-by-session';
import { where } from './where';

/**
 * The query's pageviews as rows `(t, value, n)` of one session attribute, read from
 * pageview_rollups (when decideTable picks it: no filters, or filters on `dimension` only,
 * over whole quarter hours): `n` pageviews in the bucket starting at `t` whose session has
 * `value`. The sessions queued for aggregation are read raw on top: their pageviews of the
 * range as they are now, under the attribute the raw path gives them (their row's, or the
 * missing word; under filters only those of a selected row), minus what the rollup holds for
 * them (their stored buckets under their row's attribute). Exact: test/parity.e2e-spec.ts.
 */
export function pageviewsByRollup(query: StatsQuery, dimension: SessionAttribute): RawBuilder<unknown> {
  const site = query.site.id;
  const { startUtc, endUtc } = query.range;
  const queued = sql`SELECT q.session_id FROM dirty_sessions q WHERE q.site_id = ${site}`;
  const joinSession = joinPageviewSession(query);
  return sql`(
    SELECT r.bucket AS t, r.value AS value, r.pageviews AS n FROM pageview_rollups r
    WHERE ${where.sessionRollups(query, dimension, 'r')}
    UNION ALL
    SELECT h.ts, ${attributeOrMissing(dimension, col('ps', dimension))}, 1 FROM ${hitsOfSession('h')}
    ${joinSession}
    WHERE h.site_id = ${site} AND h.session_id IN (${queued}) AND h.type = 'pageview' AND h.ts >= ${startUtc} AND h.ts < ${endUtc}
    UNION ALL
    SELECT b.bucket, ${col('s', dimension)}, -b.pageviews FROM session_pageview_buckets b
    JOIN sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id${andAlso(sessionSelected(query.filters, 's'))}
    WHERE b.site_id = ${site} AND b.session_id IN (${queued}) AND b.bucket >= ${startUtc} AND b.bucket < ${endUtc}
  )`;
}
