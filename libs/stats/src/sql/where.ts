import { AliasedRawBuilder, Expression, sql, SqlBool } from 'kysely';
import { HitType, isSessionAttribute } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { col } from './col';
import {
  andAlso,
  combinationSelected,
  noPageRowOfSession,
  noPageRowOfSessionsRow,
  pageRowOfSession,
  queuedSessionSelected,
  rollupValueSelected,
  rowOfSelectedSession,
  selectsFewCombinations,
  sessionSelected,
} from './session-filter';
import { sessionPagesPaths } from './session-pages';

export { col };

/** One end of a time interval: the instant, and whether the interval holds it. */
export interface TimeBound {
  at: Date;
  inclusive: boolean;
}

/** A rollup that keeps no session attribute cannot answer a filtered query (decideTable knows). */
function unfiltered(query: StatsQuery, table: string): void {
  if (query.filters.length > 0) throw new Error(`${table} cannot select sessions by filters`);
}

/**
 * The WHERE builders: one per source table, from the query's site, range and filters. Every
 * report selects its rows through these, so "the sessions of the range" is written once.
 * Attribution (SPEC §1): sessions belong to the range holding their start; hits and orders to
 * the range holding their own ts. Filters (SPEC §3) select sessions: a hit or an order counts
 * when its session is selected, wherever that session started.
 */
export const where = {
  /**
   * Outside the raw path, the conditions on session attributes select the sessions' combinations
   * (combinationSelected) instead of testing each session's five columns: a statement that
   * reads no more of its sessions than ix_sessions_site_combination holds (start, visitor, end,
   * pageviews, entry and exit page hashes) reads them from that index alone. `source`: what
   * sessionsSource gave the statement to read as `alias`; from session_pages, its rows are the
   * selected sessions, and only the site and range remain to test.
   */
  sessions(query: StatsQuery, alias = 's', source?: { pages: boolean }): Expression<SqlBool> {
    // Read from session_pages (sessionsSource): its rows of the path are the selected sessions.
    if (source?.pages) return sql<SqlBool>`(${where.sessions({ ...query, filters: [] }, alias)})`;
    const byCombination = combinationSelected(query, alias);
    // page!= one path, rows current: no row of the session under it (noPageRowOfSessionsRow).
    const selected =
      noPageRowOfSessionsRow(query, alias) ??
      (byCombination === null
        ? sessionSelected(query, alias)
        : sessionSelected(
            { ...query, filters: query.filters.filter((f) => !isSessionAttribute(f.dimension)) },
            alias,
          ));
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'started_at')} >= ${query.range.startUtc} AND ${col(alias, 'started_at')} < ${query.range.endUtc}${andAlso(byCombination)}${andAlso(selected)})`;
  },

  /**
   * Rows `alias` that carry a session's key (site_id, session_id; the sessions of a range's
   * orders), few beside the range's sessions, whose session started in the range and is
   * selected, when session_pages alone can tell: under `page==` paths or prefixes whose rows are
   * current, the session's row there, looked up by session (pageRowOfSession), where the
   * condition on the hits may build the set of every session with a pageview of the path (at 10M
   * pageviews under `page==/pricing`, some 700k sessions, for the 84,561 sessions of the range's
   * orders), and the session's own row is not read; under `page!=` one path whose rows are
   * current, the session's row in sessions for its start, and no row of it under the path
   * (noPageRowOfSession). Undefined otherwise: the caller reads each session's row by key and
   * tests it with where.sessions.
   */
  sessionOfRowByKey(query: StatsQuery, alias: string): Expression<SqlBool> | undefined {
    if (sessionPagesPaths(query) === undefined) return noPageRowOfSession(query, alias, query.range);
    return pageRowOfSession(query, alias, query.range);
  },

  /**
   * where.sessions for the queued sessions, read by key from dirty_sessions: the site, the range,
   * and the filters tested on each one (queuedSessionSelected).
   */
  queuedSessions(query: StatsQuery, alias = 'qs'): Expression<SqlBool> {
    const ofRange = where.sessions({ ...query, filters: [] }, alias);
    const selected = queuedSessionSelected(query, alias);
    return selected === null ? ofRange : sql<SqlBool>`(${ofRange} AND ${selected})`;
  },

  hits(query: StatsQuery, alias = 'h', type?: HitType): Expression<SqlBool> {
    const ofType = type === undefined ? sql`` : sql` AND ${col(alias, 'type')} = ${sql.lit(type)}`;
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id}${ofType} AND ${col(alias, 'ts')} >= ${query.range.startUtc} AND ${col(alias, 'ts')} < ${query.range.endUtc}${andAlso(rowOfSelectedSession(query, alias))})`;
  },

  /** Hits of the query's site, at any time, whose session the filters select (funnel steps after the first). */
  hitsOfSelectedSessions(query: StatsQuery, alias = 'h'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id}${andAlso(rowOfSelectedSession(query, alias))})`;
  },

  orders(query: StatsQuery, alias = 'o'): Expression<SqlBool> {
    // A range's orders are few beside its hits: each one's session looked up by key (sessionsWithHit).
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'ts')} >= ${query.range.startUtc} AND ${col(alias, 'ts')} < ${query.range.endUtc}${andAlso(rowOfSelectedSession(query, alias, true))})`;
  },

  /**
   * The session rollup's rows of one attribute for the query (or converted_rollups', which has
   * the same key): whole 15-minute buckets of the session start inside the range (decideTable only picks the rollup when the range's bounds
   * are bucket bounds). Filters, all on `dimension` when decideTable picks the rollup, select
   * its values.
   */
  sessionRollups(query: StatsQuery, dimension: string, alias = 'r'): Expression<SqlBool> {
    if (query.filters.some((f) => f.dimension !== dimension)) {
      throw new Error(`the ${dimension} rollup cannot select sessions by another dimension`);
    }
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc}${andAlso(rollupValueSelected(query.filters, col(alias, 'value')))})`;
  },

  /**
   * The attribute rollup's rows for the query: whole buckets of the session start in the range,
   * the filters (all on session attributes when decideTable picks it) over its five columns,
   * which are named as in sessions.
   */
  sessionAttributeRollups(query: StatsQuery, alias = 'a'): Expression<SqlBool> {
    if (query.filters.some((f) => !isSessionAttribute(f.dimension))) {
      throw new Error('the attribute rollup can only select sessions by their attributes');
    }
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc}${andAlso(sessionSelected(query, alias))})`;
  },

  /**
   * A part of the attribute rollup for the query, to select from as `alias`: its table, or for
   * the day rows where the request listed the combinations it selects (selectsFewCombinations)
   * the rows of those combinations, a range of the primary key each (site, combination, day:
   * migration 1768500000000), not every row of the range's days tested one by one (at 10M
   * pageviews, 445k rows over 30 days: 100–130 ms against 33 ms by hand for 217 combinations
   * through an index by combination, ~2–3 ms in key order). The caller still selects the rows
   * (sessionAttributeRollups).
   */
  attributeRollupPart(
    query: StatsQuery,
    table: string,
    alias: string,
  ): string | AliasedRawBuilder<unknown, string> {
    if (table !== 'session_attribute_day_rollups' || !selectsFewCombinations(query))
      return `${table} as ${alias}`;
    return sql`(SELECT * FROM ${sql.raw(`${table} ${alias}`)} WHERE ${col(alias, 'site_id')} = ${query.site.id}${andAlso(combinationSelected(query, alias))})`.as(
      alias,
    );
  },

  /**
   * The pair rollup's rows of one list for the query: whole site days of the session start in
   * the range, the values of `attribute` the filters (all on it when decideTable picks the
   * rollup) select.
   */
  sessionPairRollups(
    query: StatsQuery,
    attribute: string,
    dimension: string,
    alias = 'p',
  ): Expression<SqlBool> {
    if (query.filters.some((f) => f.dimension !== attribute)) {
      throw new Error(`the pair rollup by ${attribute} cannot select sessions by another dimension`);
    }
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'attribute')} = ${sql.lit(attribute)} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc}${andAlso(rollupValueSelected(query.filters, col(alias, 'value')))})`;
  },

  /**
   * The combination path rollup's rows of one list for the query: whole site days of the
   * session start in the range, the combinations of attributes the filters (all on attributes
   * when decideTable picks the rollup) select, through the key's range of each.
   */
  combinationPathRollups(query: StatsQuery, dimension: string, alias = 'c'): Expression<SqlBool> {
    const selected = query.filters.every((f) => isSessionAttribute(f.dimension))
      ? combinationSelected(query, alias)
      : null;
    if (selected === null) {
      throw new Error('the combination path rollup can only select sessions by their attributes');
    }
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${selected} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /**
   * The rows of one goal in goal_rollups (or goal_day_rollups) for the query: whole buckets of
   * the session start in the range.
   */
  goalRollups(query: StatsQuery, goalId: number, alias = 'g'): Expression<SqlBool> {
    unfiltered(query, 'goal_rollups');
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'goal_id')} = ${goalId} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** The entry/exit page rollup's rows of one list for the query (as sessionRollups). */
  sessionPathRollups(query: StatsQuery, dimension: string, alias = 'p'): Expression<SqlBool> {
    unfiltered(query, 'session_path_rollups');
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** The pageview rollup's rows for the query: whole 15-minute buckets of the hit ts in the range. */
  hitRollups(query: StatsQuery, alias = 'r'): Expression<SqlBool> {
    unfiltered(query, 'hit_rollups');
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** An order rollup's rows for the query: whole buckets of the order ts in the range. */
  orderRollups(query: StatsQuery, alias = 'r'): Expression<SqlBool> {
    unfiltered(query, 'the order rollups');
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /**
   * Live hits: stamped within [since, until], both inclusive (realtime windows end at "now"), of
   * `type`, as HITS_BY_TYPE_TIME reads them.
   */
  liveHits(siteId: number, since: Date, until: Date, alias: string, type: HitType): Expression<SqlBool> {
    return where.hitsStamped(
      siteId,
      { at: since, inclusive: true },
      { at: until, inclusive: true },
      alias,
      type,
    );
  },

  /**
   * The rows of `live_hits` (the last hour's hits, kept by `import`) stamped within [since,
   * until], both inclusive, of `type` or of any type: a range of its primary key.
   */
  liveHitRows(siteId: number, since: Date, until: Date, alias = 'h', type?: HitType): Expression<SqlBool> {
    const ofType = type === undefined ? sql`` : sql` AND ${col(alias, 'type')} = ${sql.lit(type)}`;
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${siteId} AND ${col(alias, 'ts')} >= ${since} AND ${col(alias, 'ts')} <= ${until}${ofType})`;
  },

  /** A site's hits of `type` stamped between two bounds, as HITS_BY_TYPE_TIME reads them. */
  hitsStamped(
    siteId: number,
    from: TimeBound,
    to: TimeBound,
    alias: string,
    type: HitType,
  ): Expression<SqlBool> {
    const ofType = sql`${col(alias, 'type')} = ${sql.lit(type)}`;
    const ts = col(alias, 'ts');
    const after = from.inclusive ? sql`${ts} >= ${from.at}` : sql`${ts} > ${from.at}`;
    const before = to.inclusive ? sql`${ts} <= ${to.at}` : sql`${ts} < ${to.at}`;
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${siteId} AND ${ofType} AND ${after} AND ${before})`;
  },

  /** The pageview rollup's rows of a site's quarter hours starting from `first` to `last`, both included. */
  hitRollupBuckets(siteId: number, first: Date, last: Date, alias = 'r'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${siteId} AND ${col(alias, 'bucket')} >= ${first} AND ${col(alias, 'bucket')} <= ${last})`;
  },
};
