import type { SqlDialect } from '@app/db';
import { RawBuilder, sql } from 'kysely';
import type { Bucket } from '../date-range';
import { attributeOrMissing, SESSION_ATTRIBUTES } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { bucketIndex } from './bucket-index';
import { col } from './col';
import { hitsOfSession } from '../conversions';
import { andAlso, sessionSelected } from './session-filter';
import { where } from './where';

/** The session attributes of sessions row `s`, named as in sessions. */
const attributes = (s: string) => sql.join(SESSION_ATTRIBUTES.map((a) => sql`${col(s, a)} AS ${sql.ref(a)}`));

/**
 * The query's pageviews (own ts in the range, session selected by the filters) as rows
 * `(t, channel, source, country, device, browser, n)`: `n` pageviews at time `t`, under their
 * session's attributes (the missing words when the session is not derived yet, as the raw
 * LEFT JOIN reads them). Read through the sessions instead of joining every pageview to its
 * session:
 *
 * 1. a derived, settled session (not queued in dirty_sessions, so its row reflects all its
 *    hits) that started in the range, ended before its end and, with `buckets`, ended in the
 *    bucket it started in, holds all its pageviews there: one row, `n` = its pageview count;
 * 2. every other pageview in the range is read from hits, through the few sessions it can
 *    belong to: settled ones of the range that end after it or cross a bucket, settled ones
 *    started before the range that end in it, and every queued session.
 *
 * Each pageview of the range is counted once: its session is either in (1), or in exactly one
 * set of (2). Exact; `test/parity.e2e-spec.ts` compares it with the raw join.
 */
export function pageviewsBySession(
  d: SqlDialect,
  query: StatsQuery,
  buckets?: readonly Bucket[],
): RawBuilder<unknown> {
  const { endUtc } = query.range;
  const sameBucket = (s: string) =>
    buckets && buckets.length > 0
      ? sql`${bucketIndex(d, col(s, 'started_at'), [...buckets])} = ${bucketIndex(d, col(s, 'ended_at'), [...buckets])}`
      : sql`1 = 1`;
  const whole = (s: string) => sql`(${col(s, 'ended_at')} < ${endUtc} AND ${sameBucket(s)})`;
  return sql`(
    SELECT s.started_at AS t, ${attributes('s')}, s.pageviews AS n
    FROM sessions s
    WHERE ${where.sessions(query, 's')} AND s.pageviews > 0 AND ${whole('s')} AND ${settled('s')}
    UNION ALL
    SELECT h.ts AS t, ${sql.join(SESSION_ATTRIBUTES.map((a) => sql`${attributeOrMissing(a, col('c', a))} AS ${sql.ref(a)}`))}, 1 AS n
    ${hitsThroughSessions(d, query, 'pageview', sql`NOT ${whole('s')}`)}
  )`;
}

/**
 * The query's pageviews (own ts in the range, session selected by the filters) as hit rows `h`
 * with `columns` of each, read through the sessions they can belong to: settled selected
 * sessions that started in the range, settled selected ones started before it that end in or
 * after its start, and every queued session (selected by its row, as the raw join reads it).
 * Each pageview of the range whose session is selected belongs to exactly one of these (as in
 * pageviewsBySession's second part, here for every session): the selected sessions' pageviews,
 * instead of every pageview of the range looked up in its session. For the values of each
 * pageview (time on page, scroll depth) under filters; exact (test/parity.e2e-spec.ts, test/filters.e2e-spec.ts).
 */
export function pageviewHitsThroughSessions(
  d: SqlDialect,
  query: StatsQuery,
  columns: readonly ('time_on_page_seconds' | 'scroll_depth')[],
): RawBuilder<unknown> {
  return sql`(SELECT ${sql.join(columns.map((c) => sql.ref(`h.${c}`)))} ${hitsThroughSessions(d, query, 'pageview')})`;
}

/**
 * `FROM … WHERE` of the hits of `type` in the range (hits `h`, each with its session `c`: its
 * id and attributes) of: the settled selected sessions of the range for which `ofRange` holds,
 * the settled selected sessions started before the range that end in or after its start, and
 * every queued session (its row's attributes, missing when it has none yet; under filters, the
 * queued sessions whose row is selected). Under filters, every hit of the range whose session
 * is selected (where.hits) belongs to exactly one of these with `ofRange` always true: a
 * settled session's row reflects all its hits. So its hits take their attributes and their
 * selection from the row already read, not from a lookup of the row for each hit (at 1M
 * pageviews under page==/pricing, one per pageview of the range and a test of the page set for
 * each), and a selective filter reads the hits of its few sessions only.
 */
export function hitsThroughSessions(
  d: SqlDialect,
  query: StatsQuery,
  type: 'pageview' | 'event',
  ofRange: RawBuilder<unknown> = sql`1 = 1`,
): RawBuilder<unknown> {
  const { startUtc, endUtc } = query.range;
  const site = query.site.id;
  // A settled session without pageviews holds none to read (sessions keep no count of events).
  const holds = type === 'pageview' ? sql` AND s.pageviews > 0` : sql``;
  const queuedSelected = sessionSelected(query, 'qs');
  // Unfiltered, a queued session without a row yet still counts (the raw LEFT JOIN); under
  // filters it belongs to no selected session.
  const queuedRow = queuedSelected === null ? sql`LEFT JOIN` : sql`JOIN`;
  return sql`FROM (
      SELECT s.session_id, ${attributes('s')} FROM sessions s
      WHERE ${where.sessions(query, 's')}${holds} AND ${ofRange} AND ${settled('s')}
      UNION ALL
      SELECT s.session_id, ${attributes('s')} FROM sessions s
      WHERE s.site_id = ${site} AND s.started_at < ${startUtc} AND s.ended_at >= ${startUtc}${holds}${andAlso(sessionSelected(query, 's'))} AND ${settled('s')}
      UNION ALL
      SELECT q.session_id, ${attributes('qs')} FROM dirty_sessions q
      ${queuedRow} sessions qs ON qs.site_id = q.site_id AND qs.session_id = q.session_id${andAlso(queuedSelected)}
      WHERE q.site_id = ${site}
    ) c
    ${sql.raw(d.orderedJoin)} ${hitsOfSession('h')} ON h.site_id = ${site} AND h.session_id = c.session_id
    WHERE h.type = ${sql.lit(type)} AND h.ts >= ${startUtc} AND h.ts < ${endUtc}`;
}

/** A session whose row reflects all its hits: not queued for aggregation. */
function settled(s: string): RawBuilder<unknown> {
  return sql`NOT EXISTS (SELECT 1 FROM dirty_sessions q WHERE q.site_id = ${col(s, 'site_id')} AND q.session_id = ${col(s, 'session_id')})`;
}

/**
 * The derived session (`ps`) of a pageview `h` read raw: under filters the pageview needs its
 * session selected, looked up by key after `h` (orderedJoin); unfiltered, any session (or none
 * yet) will do.
 */
export function joinPageviewSession(d: SqlDialect, query: StatsQuery): RawBuilder<unknown> {
  const selected = sessionSelected(query, 'ps');
  return selected === null
    ? sql`LEFT JOIN sessions ps ON ps.site_id = h.site_id AND ps.session_id = h.session_id`
    : sql`${sql.raw(d.orderedJoin)} sessions ps ON ps.site_id = h.site_id AND ps.session_id = h.session_id AND ${selected}`;
}
