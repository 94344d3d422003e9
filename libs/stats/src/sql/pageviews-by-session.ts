import type { SqlDialect } from '@app/db';
import { RawBuilder, sql, SqlBool } from 'kysely';
import type { Bucket } from '../date-range';
import { attributeOrMissing, type SessionAttribute } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { bucketIndex } from './bucket-index';
import { col } from './col';
import { hitsOfSession } from '../conversions';
import { andAlso, queuedSessionSelected, sessionSelected } from './session-filter';
import { sessionsSource, settledSessionsScope } from './session-pages';
import { where } from './where';
import { isSecondsSum, SESSION_ENGAGEMENT_COLUMNS } from './session-engagement';
import { decideTable, eventBucketsMayAnswer } from '../plan/table-decider';
import { rollupParts, unionAllOf } from '../rollups/day-split';
import {
  Aggregate,
  pageviewMetrics,
  pageviewRollupMetrics,
  scrollDepthCounts,
  scrollDepthRollupCounts,
} from './metrics';

/**
 * The query's pageviews (own ts in the range, session selected by the filters) as rows
 * `(t, [dimension,] n)`: `n` pageviews at time `t`, under their session's `dimension` when one
 * is asked for (the missing word when the session is not derived yet, as the raw LEFT JOIN
 * reads it). Read through the sessions instead of joining every pageview to its session:
 *
 * 1. a derived, settled session (not queued in dirty_sessions, so its row reflects all its
 *    hits) that started in the range, ended before its end and, with `buckets`, ended in the
 *    bucket it started in, holds all its pageviews there: one row, `n` = its pageview count;
 * 2. every other pageview in the range is read from hits, through the few sessions it can
 *    belong to: settled ones of the range that end after it or cross a bucket, settled ones
 *    started before the range that end in it, and every queued session.
 *
 * Each pageview of the range is counted once: its session is either in (1), or in exactly one
 * set of (2). Exact; `test/parity.e2e-spec.ts` compares it with the raw join. The rows carry
 * only the one attribute asked for: MariaDB materialises them, and five VARCHAR(255) columns
 * per row spilled the 64 MB in-memory temporary tables (docs/decisions/filters.md). With a
 * dimension, each part is summed by its value and report bucket: a row of each, `t` its
 * earliest time, which only tells the bucket. Without either (the total alone: only `n` may be
 * read), the whole sessions are one row.
 */
export function pageviewsBySession(
  d: SqlDialect,
  query: StatsQuery,
  buckets?: readonly Bucket[],
  dimension?: SessionAttribute,
): RawBuilder<unknown> {
  const { endUtc } = query.range;
  const sameBucket = (s: string) =>
    buckets && buckets.length > 0
      ? sql`${bucketIndex(d, col(s, 'started_at'), [...buckets])} = ${bucketIndex(d, col(s, 'ended_at'), [...buckets])}`
      : sql`1 = 1`;
  const whole = (s: string) => sql`(${col(s, 'ended_at')} < ${endUtc} AND ${sameBucket(s)})`;
  const value = (s: string) => attributeOrMissing(dimension!, col(s, dimension!));
  const attribute = (s: string) =>
    dimension === undefined ? sql`` : sql`${value(s)} AS ${sql.ref(dimension)}, `;
  // The whole sessions are settled ones: from session_pages under a page condition whatever the
  // queue holds (settledSessionsScope).
  const settledQuery = settledSessionsScope(query);
  const source = sessionsSource(settledQuery, 's');
  const throughHits = hitsThroughSessions(
    d,
    query,
    'pageview',
    (s) => sql`h.ts AS t, ${attribute(s)}1 AS n`,
    // Without buckets, a session that is not whole runs past the range's end.
    buckets === undefined ? sql`NOT ${whole('s')}${crossing(query, 's', endUtc)}` : sql`NOT ${whole('s')}`,
  );
  const wholeWhere = sql`${where.sessions(settledQuery, 's', source)} AND s.pageviews > 0 AND ${whole('s')} AND ${settled('s')}`;
  if (dimension !== undefined && !testsHitsOfSessions(query, source)) {
    // By value (and report bucket): each part summed by both before the union, a row of each
    // group at its earliest time (in the same bucket). MariaDB materialises the union with the
    // value's VARCHAR(255) at its full width: a row a whole session spilled the 64 MB in-memory
    // temporary table (at 1M pageviews under entry_page==/, 94k sessions: 0.85 s for the
    // breakdown's sums). With one bucket or none, by value alone (SQLite reads a literal in
    // GROUP BY as a column's place). Not where the sessions are tested against their hits
    // (testsHitsOfSessions).
    const groups = (t: RawBuilder<unknown>, v: RawBuilder<unknown>) =>
      buckets === undefined || buckets.length < 2 ? v : sql`${bucketIndex(d, t, [...buckets])}, ${v}`;
    const ref = sql.ref(dimension);
    return sql`(
    SELECT MIN(s.started_at) AS t, ${value('s')} AS ${ref}, SUM(s.pageviews) AS n
    FROM ${source.raw}
    WHERE ${wholeWhere}
    GROUP BY ${groups(sql.ref('s.started_at'), value('s'))}
    UNION ALL
    SELECT MIN(y.t) AS t, ${sql.ref(`y.${dimension}`)} AS ${ref}, SUM(y.n) AS n
    FROM (${throughHits}) y
    GROUP BY ${groups(sql.ref('y.t'), sql.ref(`y.${dimension}`))}
  )`;
  }
  const total = buckets === undefined && dimension === undefined;
  const wholeSessions =
    total && attributeRollupAnswers(query)
      ? wholeSessionPageviewsByRollup(d, query)
      : total && !testsHitsOfSessions(query, source)
        ? // The total alone: the whole sessions summed before the union, which MariaDB
          // materialises, a row a session otherwise (at 10M pageviews under page==/pricing,
          // 700k rows: 0.89-1.09 -> 0.55-0.61 s for the statement, BENCHMARKS.md run BT). The
          // row's `t` is no pageview's time, as wholeSessionPageviewsByRollup's.
          sql`SELECT MIN(s.started_at) AS t, SUM(s.pageviews) AS n
    FROM ${source.raw}
    WHERE ${wholeWhere}`
        : sql`SELECT s.started_at AS t, ${attribute('s')}s.pageviews AS n
    FROM ${source.raw}
    WHERE ${wholeWhere}`;
  return sql`(
    ${wholeSessions}
    UNION ALL
    ${throughHits}
  )`;
}

/**
 * Whether the query's pageviews (own ts in the range) can be read beside its session totals, in
 * the statement that reads the range's selected sessions (sharedStatements.sessionTotalsWithPageviews):
 * they are read through their sessions (pageviewsBySession), from the sessions' own rows, which
 * that statement reads anyway (not from the attribute rollup, and not where a GROUP BY would turn
 * MariaDB to testing each session against a page or goal condition's set: testsHitsOfSessions).
 */
export function pageviewsBesideSessionTotals(query: StatsQuery): boolean {
  return (
    decideTable(query, 'hits', { metrics: ['pageviews'] }).kind === 'bySession' &&
    !attributeRollupAnswers(query) &&
    !testsHitsOfSessions(query, sessionsSource(query, 's'))
  );
}

/**
 * Σ pageviews of the sessions `s` a statement over the range's selected sessions reads that end
 * before the range's end, queued or not: with pageviewsBeyondWholeSessions' rows, the query's
 * pageviews.
 */
export function wholeSessionsPageviews(query: StatsQuery, s: string): RawBuilder<number | string> {
  return sql<
    number | string
  >`COALESCE(SUM(CASE WHEN ${col(s, 'ended_at')} < ${query.range.endUtc} THEN ${col(s, 'pageviews')} ELSE 0 END), 0)`;
}

/**
 * Rows `(n)` that, summed with wholeSessionsPageviews over the range's selected sessions, give
 * the query's pageviews, as pageviewsBySession's total: less the pageviews of those sessions
 * that are queued (their row may lack hits; the queued ones are read from their hits below), and
 * the pageviews in the range of the sessions pageviewsBySession reads from hits (settled ones of
 * the range that end at or after its end, settled ones started before it, every queued one).
 * The settled sessions are those not queued: a look-up of each queued session instead of a test
 * of each session of the range (`settled`, one probe of dirty_sessions a row). The sessions'
 * sum and these rows must be read by one statement, at one moment.
 */
export function pageviewsBeyondWholeSessions(d: SqlDialect, query: StatsQuery): RawBuilder<unknown> {
  const { endUtc } = query.range;
  const source = sessionsSource(query, 's');
  // From session_pages its rows are the selected sessions; from sessions each queued one tested.
  const queued = source.pages ? where.sessions(query, 's', source) : where.queuedSessions(query, 's');
  const throughHits = hitsThroughSessions(
    d,
    query,
    'pageview',
    () => sql`1 AS n`,
    sql`NOT ${col('s', 'ended_at')} < ${endUtc}${crossing(query, 's', endUtc)}`,
  );
  return sql`SELECT ${negated('s', 'pageviews')} AS n FROM dirty_sessions q
    ${sql.raw(d.orderedJoin)} ${source.raw} ON s.site_id = q.site_id AND s.session_id = q.session_id
    WHERE q.site_id = ${query.site.id} AND ${queued} AND ${col('s', 'ended_at')} < ${endUtc}
    UNION ALL
    ${throughHits}`;
}

/** `0 - s.column`, signed: counts are unsigned in sessions (isSecondsSum). */
function negated(s: string, column: string): RawBuilder<unknown> {
  return isSecondsSum(column)
    ? sql`0 - ${sql.ref(`${s}.${column}`)}`
    : sql`0 - CAST(${sql.ref(`${s}.${column}`)} AS SIGNED)`;
}

/**
 * Whether the statement tests its sessions against their hits: a `page` or `goal` condition not
 * read from session_pages, whose sessions MariaDB gathers as a set (sessionsWithHit) and, when
 * the set is small, reads first. A GROUP BY over the sessions made it test each of the range's
 * sessions against the set instead: at 1M pageviews, the breakdown's pageviews under goal==3
 * (8.9k sessions) 0.56 → 1.43 s.
 */
function testsHitsOfSessions(query: StatsQuery, source: { pages: boolean }): boolean {
  return !source.pages && query.filters.some((f) => f.dimension === 'page' || f.dimension === 'goal');
}

/** Whether the query's session counts come from the attribute rollup (conditions on several attributes). */
function attributeRollupAnswers(query: StatsQuery): boolean {
  return (
    decideTable(query, 'sessions', { metrics: ['sessionPageviews'] }).rollupTable ===
    'session_attribute_rollups'
  );
}

/**
 * The rows `(t, n)` of pageviewsBySession's whole sessions (settled, selected, started in the
 * range, ended before its end; no report buckets), from the attribute rollup instead of each
 * session's row (wholeSessionSumsByRollup). The rows' `t` is no pageview's time, so only a
 * total may be read from them.
 */
function wholeSessionPageviewsByRollup(d: SqlDialect, query: StatsQuery): RawBuilder<unknown> {
  return wholeSessionSumsByRollup(
    d,
    query,
    [{ rollup: 'session_pageviews', session: 'pageviews', as: 'n' }],
    't',
  );
}

/** A sum of the attribute rollup, the session column it sums, and the name the rows give it. */
interface RolledUpSum {
  rollup: string;
  session: string;
  as: string;
}

/**
 * Rows of `sums` whose totals are those of the query's whole sessions (settled, selected, started
 * in the range, ended before its end) under conditions on several attributes, read from the
 * attribute rollup instead of each session's row: the selected combinations' rows of the range
 * (whole site days from the day rows), which hold every derived session's row as `aggregate`
 * last wrote it, minus the rows of those that are not whole: the selected sessions of the range
 * that end at or after its end (looked for among those started within the site's longest
 * session before it: crossing), and the queued ones that end before it. With `startAs`, each
 * row also carries a time under that name (the bucket, or the subtracted session's start).
 */
function wholeSessionSumsByRollup(
  d: SqlDialect,
  query: StatsQuery,
  sums: readonly RolledUpSum[],
  startAs?: string,
): RawBuilder<unknown> {
  const { endUtc } = query.range;
  const rolledUp = rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups').map(
    (part) =>
      d.builder
        .selectFrom(
          where.attributeRollupPart(part.query, part.table, 'a') as 'session_attribute_rollups as a',
        )
        .select([
          ...(startAs === undefined ? [] : [sql<Date>`a.bucket`.as(startAs)]),
          ...sums.map((c) => sql.ref(`a.${c.rollup}`).as(c.as)),
        ])
        .where(where.sessionAttributeRollups(part.query, 'a')),
  );
  const named = [...(startAs === undefined ? [] : [startAs]), ...sums.map((c) => c.as)];
  const subtracted = (s: string) =>
    sql.join([
      ...(startAs === undefined ? [] : [sql.ref(`${s}.started_at`)]),
      ...sums.map((c) => negated(s, c.session)),
    ]);
  return sql`SELECT ${sql.join(named.map((n) => sql.ref(`r.${n}`)))} FROM ${unionAllOf(rolledUp).as('r')}
    UNION ALL
    SELECT ${subtracted('s')} FROM sessions s
    WHERE ${where.sessions(query, 's')} AND s.ended_at >= ${endUtc}${crossing(query, 's', endUtc)}
    UNION ALL
    SELECT ${subtracted('qs')} FROM dirty_sessions q
    JOIN sessions qs ON qs.site_id = q.site_id AND qs.session_id = q.session_id
    WHERE q.site_id = ${query.site.id} AND ${where.queuedSessions(query, 'qs')} AND qs.ended_at < ${endUtc}`;
}

/**
 * The engagement sums of the query's pageviews (own ts in the range, session selected by the
 * filters) as rows `(tsum, timed, b0…b3)`: Σ time on page, pageviews that carry one, and
 * pageviews per scroll-depth bucket (SCROLL_DEPTH_BUCKETS order), to be summed. As in
 * pageviewsBySession, a settled selected session that started in the range and ended before its
 * end holds all its pageviews there: one row of its own sums (sessions' SESSION_ENGAGEMENT_COLUMNS,
 * read as rollup rows; under a condition on one attribute from ix_sessions_site_combination
 * alone, under conditions on several from the attribute rollup, wholeSessionSumsByRollup).
 * Every other pageview of the range comes from the hits of its session (hitsThroughSessions),
 * counted by the report's definitions. Each pageview is counted once; exact
 * (test/parity.e2e-spec.ts compares it with the raw pageviews).
 */
export function pageviewEngagementBySession(d: SqlDialect, query: StatsQuery): RawBuilder<unknown> {
  const { endUtc } = query.range;
  const whole = sql`s.ended_at < ${endUtc}`;
  const row = (tsum: Aggregate, timed: Aggregate, buckets: readonly Aggregate[]) =>
    sql.join([
      sql`${tsum} AS tsum`,
      sql`${timed} AS timed`,
      ...buckets.map((b, i) => sql`${b} AS ${sql.ref(`b${i}`)}`),
    ]);
  const stored = pageviewRollupMetrics('s');
  const counted = pageviewMetrics('h');
  // Settled sessions only: from session_pages under a page condition whatever the queue holds.
  const settledQuery = settledSessionsScope(query);
  const source = sessionsSource(settledQuery, 's');
  const wholeSessions = attributeRollupAnswers(query)
    ? sql`SELECT ${row(stored.timeOnPageSum, stored.timedPageviews, scrollDepthRollupCounts('s'))}
      FROM (${wholeSessionSumsByRollup(
        d,
        query,
        SESSION_ENGAGEMENT_COLUMNS.map((c) => ({ rollup: c, session: c, as: c })),
      )}) s`
    : sql`SELECT ${row(stored.timeOnPageSum, stored.timedPageviews, scrollDepthRollupCounts('s'))}
      FROM ${source.raw}
      WHERE ${where.sessions(settledQuery, 's', source)} AND s.pageviews > 0 AND ${whole} AND ${settled('s')}`;
  return sql`(
    ${wholeSessions}
    UNION ALL
    SELECT ${row(counted.timeOnPageSum, counted.timedPageviews, scrollDepthCounts('h'))}
    FROM (${hitsThroughSessions(
      d,
      query,
      'pageview',
      () => sql`h.time_on_page_seconds AS time_on_page_seconds, h.scroll_depth AS scroll_depth`,
      sql`NOT ${whole}${crossing(query, 's', endUtc)}`,
    )}) h
  )`;
}

/**
 * `SELECT … UNION ALL …`: `columns` (over the hit `h` and its session, the alias given) of
 * each hit of `type` in the range of: the settled selected sessions of the range for which
 * `ofRange` holds (over sessions `s`), the settled selected sessions started before the range
 * that end in or after its start, and every queued session (its row, NULL-extended when it has
 * none yet; under filters, the queued sessions whose row is selected). Under filters, every hit
 * of the range whose session is selected (where.hits) belongs to exactly one of these with
 * `ofRange` always true: a settled session's row reflects all its hits. So its hits take their
 * attributes and their selection from the row already read, not from a lookup of the row for
 * each hit (at 1M pageviews under page==/pricing, one per pageview of the range and a test of
 * the page set for each), and a selective filter reads the hits of its few sessions only.
 *
 * Each part joins its sessions to their hits itself, so that what MariaDB materialises for the
 * union is the caller's columns only: a union of the sessions first, joined to their hits
 * after, held each session's id and five attributes (5 KB a row in a MEMORY table), which
 * spilled to disk from ~12,000 sessions on (engagement under `source==google;device==mobile`
 * at 1M: 424 ms, 177 ms for the raw join).
 */
export function hitsThroughSessions(
  d: SqlDialect,
  query: StatsQuery,
  type: 'pageview' | 'event',
  columns: (session: string) => RawBuilder<unknown>,
  ofRange: RawBuilder<unknown> = sql`1 = 1`,
): RawBuilder<unknown> {
  const hits = hitRowsOfSessions(d, query, type, columns);
  return throughSessions(query, type, hits, hits, ofRange);
}

/**
 * `SELECT step_key, occurrences, sessions UNION ALL …`: the event hits of the range of the
 * selected sessions, as hitsThroughSessions(`event`) reads them, summed by name in each part:
 * the rows of a name add up to its hits (`occurrences`) and its distinct sessions (`sessions`;
 * the parts' sessions are disjoint). A settled session's are read from its rows of
 * session_event_buckets (libs/stats/src/rollups/event-rollup.ts: its event hits by name and
 * 15-minute UTC bucket, written in the transaction that derives it, so they are its hits as its
 * row reflects them) in the range's buckets: when the range is whole quarter hours
 * (eventBucketsMayAnswer), a hit is in the range exactly when its bucket is, and a session
 * counts once for a name at its first such bucket: a look-up beside the row, unless the row
 * holds all the session's event hits (its session_pages row's `events`, derived from the same
 * hits) or its bucket is the one of the session's start. Those rows hold a session's event hits
 * and nothing else, next to each other by session. A queued session's are read from its hits as
 * they are now; on the raw path (or a range of ragged quarter hours) every session's, grouped by
 * name and session first.
 *
 * Summed in each part, the union holds a few rows a name: at 10M pageviews under page==/pricing
 * (680k sessions) a row a session and name, 716k of them, went to a temporary table on disk
 * (MariaDB materialises a union with the name's VARCHAR(255) at its full width), and grouping
 * them by session again to count the distinct sessions took 5 s more (BENCHMARKS.md run BN).
 */
export function eventsThroughSessions(d: SqlDialect, query: StatsQuery): RawBuilder<unknown> {
  const { startUtc, endUtc } = query.range;
  if (!eventBucketsMayAnswer(query)) {
    // Each hit of the selected sessions, grouped by name and session, then by name.
    const each = hitRowsOfSessions(
      d,
      query,
      'event',
      () => sql`h.step_key AS step_key, h.session_id AS session_id`,
    );
    return sql`SELECT x.step_key, SUM(x.n) AS occurrences, COUNT(*) AS sessions
      FROM (SELECT u.step_key, u.session_id, COUNT(*) AS n FROM (${throughSessions(query, 'event', each, each)}) u GROUP BY u.step_key, u.session_id) x
      GROUP BY x.step_key`;
  }
  // The queued sessions (few) by name, each counted once.
  const queued = hitRowsOfSessions(
    d,
    query,
    'event',
    () => sql`h.step_key AS step_key, COUNT(*) AS occurrences, COUNT(DISTINCT h.session_id) AS sessions`,
    sql`h.step_key`,
  );
  // From session_pages, whose rows hold `events`; the sessions index the combinations are read
  // through does not, and a look-up of each row for it cost more than the probe it saves (at 10M
  // under country==US, 4.5 -> 9.0 s).
  const allEvents = sessionsSource(settledSessionsScope(query), 's').pages
    ? sql` WHEN b.hits = s.events THEN 1`
    : sql``;
  // A bucket that starts at or before the session's start is its first (every hit of a settled
  // session is stamped at or after its start): no earlier bucket to look up. At 1M pageviews
  // under page==/pricing, 52k of the 73k rows were looked up, 21k with this.
  const firstBucket = (session: string) => sql` WHEN b.bucket <= ${col(session, 'started_at')} THEN 1`;
  const earlierBucket = sql<SqlBool>`EXISTS (SELECT 1 FROM session_event_buckets e WHERE e.site_id = b.site_id AND e.session_id = b.session_id AND e.name = b.name AND e.bucket >= ${startUtc} AND e.bucket < b.bucket)`;
  const buckets: SessionRows = {
    columns: (session) =>
      sql`b.name AS step_key, SUM(b.hits) AS occurrences, SUM(CASE${allEvents}${firstBucket(session)} WHEN ${earlierBucket} THEN 0 ELSE 1 END) AS sessions`,
    join: (session) =>
      sql`${sql.raw(d.orderedJoin)} session_event_buckets b ON b.site_id = ${query.site.id} AND b.session_id = ${col(session, 'session_id')}`,
    where: sql`b.bucket >= ${startUtc} AND b.bucket < ${endUtc}`,
    groupBy: sql`b.name`,
  };
  return throughSessions(query, 'event', buckets, queued);
}

/** How a session's rows are read: joined after it, under a condition, these columns (grouped by `groupBy`). */
interface SessionRows {
  columns: (session: string) => RawBuilder<unknown>;
  join: (session: string) => RawBuilder<unknown>;
  where: RawBuilder<unknown>;
  groupBy?: RawBuilder<unknown>;
}

/** A session's hits of `type` in the range, through HITS_BY_SESSION. */
function hitRowsOfSessions(
  d: SqlDialect,
  query: StatsQuery,
  type: 'pageview' | 'event',
  columns: (session: string) => RawBuilder<unknown>,
  groupBy?: RawBuilder<unknown>,
): SessionRows {
  const { startUtc, endUtc } = query.range;
  return {
    columns,
    groupBy,
    join: (session) =>
      sql`${sql.raw(d.orderedJoin)} ${hitsOfSession('h')} ON h.site_id = ${query.site.id} AND h.session_id = ${col(session, 'session_id')}`,
    where: sql`h.type = ${sql.lit(type)} AND h.ts >= ${startUtc} AND h.ts < ${endUtc}`,
  };
}

/**
 * The rows of the three sets of sessions of hitsThroughSessions: `settledRows` of the settled
 * ones (started in the range, for which `ofRange` holds; started before it and ending in or
 * after its start), `queuedRows` of the queued ones.
 */
function throughSessions(
  query: StatsQuery,
  type: 'pageview' | 'event',
  settledRows: SessionRows,
  queuedRows: SessionRows,
  ofRange: RawBuilder<unknown> = sql`1 = 1`,
): RawBuilder<unknown> {
  const { startUtc } = query.range;
  const site = query.site.id;
  const queuedSelected = queuedSessionSelected(query, 'qs');
  // Unfiltered, a queued session without a row yet still counts (the raw LEFT JOIN); under
  // filters it belongs to no selected session.
  const queuedRow = queuedSelected === null ? sql`LEFT JOIN` : sql`JOIN`;
  // The settled sessions from session_pages where it answers (sessionsSource), whatever the queue
  // holds (settledSessionsScope); the queued ones are tested against their hits as they are now.
  const settledQuery = settledSessionsScope(query);
  const source = sessionsSource(settledQuery, 's');
  // A settled session without pageviews (events) holds none to read. Its count of events is
  // tested only on session_pages rows: the sessions index the combinations are read through
  // lacks it (see eventsThroughSessions).
  const holds =
    type === 'pageview' ? sql` AND s.pageviews > 0` : source.pages ? sql` AND s.events > 0` : sql``;
  const selectedBefore = source.pages ? null : sessionSelected(query, 's');
  const grouped = (rows: SessionRows) =>
    rows.groupBy === undefined ? sql`` : sql` GROUP BY ${rows.groupBy}`;
  return sql`SELECT ${settledRows.columns('s')} FROM ${source.raw} ${settledRows.join('s')}
      WHERE ${where.sessions(settledQuery, 's', source)}${holds} AND ${ofRange} AND ${settled('s')} AND ${settledRows.where}${grouped(settledRows)}
    UNION ALL
    SELECT ${settledRows.columns('s')} FROM ${source.raw} ${settledRows.join('s')}
      WHERE s.site_id = ${site} AND s.started_at < ${startUtc} AND s.ended_at >= ${startUtc}${crossing(query, 's', startUtc)}${holds}${andAlso(selectedBefore)} AND ${settled('s')} AND ${settledRows.where}${grouped(settledRows)}
    UNION ALL
    SELECT ${queuedRows.columns('qs')} FROM dirty_sessions q
      ${queuedRow} sessions qs ON qs.site_id = q.site_id AND qs.session_id = q.session_id${andAlso(queuedSelected)}
      ${queuedRows.join('q')}
      WHERE q.site_id = ${site} AND ${queuedRows.where}${grouped(queuedRows)}`;
}

/** A session whose row reflects all its hits: not queued for aggregation. */
export function settled(s: string): RawBuilder<unknown> {
  return sql`NOT EXISTS (SELECT 1 FROM dirty_sessions q WHERE q.site_id = ${col(s, 'site_id')} AND q.session_id = ${col(s, 'session_id')})`;
}

/**
 * ` AND s.started_at >= instant - the site's longest session`, for a condition that holds only
 * for sessions that start before `instant` and end at or after it, where the query knows that
 * bound (under filters: StatsQuery.longestSessionMillis). Exact: such a session is at most that
 * long, so it started no earlier. It lets the statement read the sessions started in that last
 * stretch before `instant` instead of every session that ends after it (through
 * `ix_sessions_site_end`, a day's worth when the range ended a day ago) or every selected session
 * of the range (through `ix_sessions_site_combination`), or, for `instant` the range's start,
 * every session the site had before it.
 */
function crossing(query: StatsQuery, s: string, instant: Date): RawBuilder<unknown> {
  if (query.longestSessionMillis === undefined) return sql``;
  return sql` AND ${col(s, 'started_at')} >= ${new Date(instant.getTime() - query.longestSessionMillis)}`;
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
