import { localDayStart, type Bucket } from '../date-range';
import { isSessionAttribute, type SessionAttribute } from '../definitions';
import { soleAttributeOf } from '../query/filters';
import type { StatsQuery } from '../query/stats-query';
import { wholeSiteDays } from '../rollups/day-split';
import { PAIR_DIMENSIONS, PATH_DIMENSIONS, rollupCovers } from '../rollups/session-rollup';
import type { PageviewMetric, SessionMetric } from '../sql/metrics';
import { selectsFewCombinations, storedGoalSelection } from '../sql/session-filter';
import { soleWholePage } from '../sql/session-pages';

/**
 * Where a report's rows come from: sessions by start; pageviews and events, orders by their
 * own ts; visitors by the start of their first session (the new visitors of a range).
 */
export type RowSource = 'sessions' | 'hits' | 'orders' | 'visitors';

/** The table that answers: the raw table of the source, or its rollup. */
export interface TableChoice {
  source: RowSource;
  /**
   * `bySession`: pageviews read through their sessions (sql/pageviews-by-session.ts): a
   * settled session that lies whole in one bucket counts all its pageviews at once.
   * `throughSessions`: the values of each filtered pageview (time on page, scroll depth) read
   * through the selected sessions (sql/pageviews-by-session.ts pageviewEngagementBySession): a
   * session whole in the range from the sums its row keeps, the others from their hits.
   */
  kind: 'raw' | 'rollup' | 'bySession' | 'throughSessions';
  /**
   * For the session rollup: the attribute whose rows to read. The statement's own dimension,
   * else the one attribute every filter is on, else `channel` (every session has exactly one
   * channel, so its rows add up to all sessions).
   */
  rollupDimension?: SessionAttribute;
  /**
   * For the session rollup: `session_rollups` (one attribute per row), or
   * `session_attribute_rollups` (every attribute per row) when the filters name an attribute
   * other than the one the rows are of. For new visitors: `visitor_first_rollups`, or none
   * (the visitors table's index by first session). `session_pair_day_rollups`: the sessions of
   * another attribute's values or of entry and exit pages under conditions on one attribute,
   * over whole site days (`rollupDimension`: the filtered attribute).
   * `session_combination_path_day_rollups`: the sessions of entry and exit pages under conditions
   * on several attributes, over whole site days.
   */
  rollupTable?:
    | 'session_rollups'
    | 'session_attribute_rollups'
    | 'session_pair_day_rollups'
    | 'session_combination_path_day_rollups'
    | 'visitor_first_rollups'
    | 'pageview_rollups'
    | 'revenue_rollups';
}

/** What a statement needs, so the decider can tell whether a rollup has it. */
export interface SessionNeeds {
  metrics: readonly (SessionMetric | PageviewMetric | 'scrollDepth' | 'revenue')[];
  /** The attribute it groups by, if any. */
  dimension?: SessionAttribute | 'entry_path' | 'exit_path';
  /** The report buckets it groups by, if any. */
  buckets?: readonly Bucket[];
  /** It looks at each session (purchases; conversions have rollups of their own: conversionRollupsMayAnswer). */
  perSession?: boolean;
}

/**
 * What each rollup keeps: the session rollup, counts of sessions by attribute (visitors are
 * distinct over sessions and stay raw); the pageview rollup, counts of pageviews that do not
 * depend on their session.
 */
const ROLLED_UP: Partial<Record<RowSource, ReadonlySet<string>>> = {
  sessions: new Set(['sessions', 'bounces', 'sessionPageviews', 'durationSeconds']),
  hits: new Set(['pageviews', 'timeOnPageSum', 'timedPageviews', 'scrollDepth']),
};

/**
 * The one place that decides which table answers a query's rows of `source`. Sessions and
 * pageviews are read from their rollup when it holds everything the statement needs, over
 * whole 15-minute buckets; everything else, and everything when `query.tables` is `raw`,
 * reads the raw tables. A statement builder switches on `kind`. Filters (SPEC §3) select
 * sessions: when every condition is on a session attribute, the session rollup answers them:
 * its rows of one attribute when every condition is on that attribute and the statement groups
 * by it or by none, else the attribute rollup, whose rows carry all five. Conditions on pages
 * and goals, and every filtered pageview, event or order, read raw rows.
 */
export function decideTable(query: StatsQuery, source: RowSource, needs?: SessionNeeds): TableChoice {
  const raw: TableChoice = { source, kind: 'raw' };
  if (source === 'visitors') {
    // The visitors table (first session per visitor, kept by aggregate with the sessions) counts
    // a range's new visitors; under filters a new visitor must also have a selected session.
    if (query.tables === 'raw' || query.filters.length > 0) return raw;
    // Over whole quarter hours, its rollup by the bucket of the first session does.
    return rollupCovers(query.range)
      ? { source, kind: 'rollup', rollupTable: 'visitor_first_rollups' }
      : { source, kind: 'rollup' };
  }
  if (source === 'orders') {
    // Revenue by one attribute, unfiltered or under filters on that attribute only: its rows of
    // revenue_rollups over whole quarter hours (every other order read is raw, or the order
    // rollups: orderRollupsMayAnswer).
    const dimension = needs?.dimension;
    if (query.tables === 'raw' || dimension === undefined) return raw;
    if (!isSessionAttribute(dimension)) return raw;
    const filtersOnIt = query.filters.length === 0 || soleAttributeOf(query.filters) === dimension;
    return filtersOnIt && rollupCovers(query.range, needs?.buckets)
      ? {
          source,
          kind: 'rollup',
          rollupTable: 'revenue_rollups',
          rollupDimension: dimension,
        }
      : raw;
  }
  const kept = ROLLED_UP[source];
  if (query.tables === 'raw' || !kept || !needs || needs.perSession) return raw;
  const filteredBy = soleAttributeOf(query.filters);
  if (source === 'hits' && (query.filters.length > 0 || needs.dimension !== undefined)) {
    const attribute = needs.dimension === undefined || isSessionAttribute(needs.dimension);
    if (!attribute) return raw;
    // Per-pageview values under filters: the selected sessions' pageviews, not every pageview
    // of the range looked up in its session.
    if (!needs.metrics.every((m) => m === 'pageviews')) {
      return needs.dimension === undefined ? { source, kind: 'throughSessions' } : raw;
    }
    // Pageviews by one attribute, or under filters on that attribute only: its rows of the
    // pageview rollup, over whole quarter hours.
    const dimension = (needs.dimension as SessionAttribute | undefined) ?? filteredBy;
    const filtersOnIt = query.filters.length === 0 || filteredBy === dimension;
    if (dimension !== undefined && filtersOnIt && rollupCovers(query.range, needs.buckets)) {
      return { source, kind: 'rollup', rollupTable: 'pageview_rollups', rollupDimension: dimension };
    }
    // Any other filtered pageviews: through their sessions.
    return { source, kind: 'bySession' };
  }
  if (query.filters.length > 0) {
    if (source !== 'sessions') return raw;
    if (!query.filters.every((f) => isSessionAttribute(f.dimension))) return raw;
  }
  if (!needs.metrics.every((m) => kept.has(m))) return raw;
  if (pairRowsAnswer(query, needs, filteredBy)) {
    return { source, kind: 'rollup', rollupTable: 'session_pair_day_rollups', rollupDimension: filteredBy };
  }
  if (combinationPathRowsAnswer(query, needs, filteredBy)) {
    return { source, kind: 'rollup', rollupTable: 'session_combination_path_day_rollups' };
  }
  if (needs.dimension !== undefined) {
    // Only sessions are rolled up by attribute; a pageview's attribute is its session's.
    if (source !== 'sessions') return raw;
    const byPath = (PATH_DIMENSIONS as readonly string[]).includes(needs.dimension);
    if (!byPath && !isSessionAttribute(needs.dimension)) return raw;
    // The entry/exit page rollup counts sessions only, of every attribute.
    if (byPath && (query.filters.length > 0 || !needs.metrics.every((m) => m === 'sessions'))) return raw;
  }
  if (!rollupCovers(query.range, needs.buckets)) return raw;
  if (source !== 'sessions') return { source, kind: 'rollup' };
  const attribute =
    needs.dimension !== undefined && isSessionAttribute(needs.dimension) ? needs.dimension : undefined;
  if (query.filters.length === 0 || (filteredBy !== undefined && (attribute ?? filteredBy) === filteredBy)) {
    return {
      source,
      kind: 'rollup',
      rollupTable: 'session_rollups',
      rollupDimension: attribute ?? filteredBy ?? 'channel',
    };
  }
  return { source, kind: 'rollup', rollupTable: 'session_attribute_rollups', rollupDimension: attribute };
}

/**
 * Whether the pair rollup counts a statement's sessions: grouped by one of its lists (an
 * attribute the overview lists, other than the one every condition is on, or the entry or exit
 * page), sessions only, over whole site days, in report buckets that start on site days (its
 * rows are by site day only: days, weeks and months, not hours).
 */
function pairRowsAnswer(
  query: StatsQuery,
  needs: SessionNeeds,
  filteredBy: SessionAttribute | undefined,
): filteredBy is SessionAttribute {
  return (
    filteredBy !== undefined &&
    needs.dimension !== undefined &&
    needs.dimension !== filteredBy &&
    (PAIR_DIMENSIONS as readonly string[]).includes(needs.dimension) &&
    needs.metrics.every((m) => m === 'sessions') &&
    (needs.buckets ?? []).every(
      (b) => localDayStart(b.startUtc, query.site.timezone).getTime() === b.startUtc.getTime(),
    ) &&
    wholeSiteDays(query)
  );
}

/**
 * Whether the combination path rollup counts a statement's sessions: the entry or exit page
 * list under conditions on several attributes (the caller checked that every condition is on an
 * attribute), sessions only, in no report buckets, over whole site days (its rows are by site day).
 */
function combinationPathRowsAnswer(
  query: StatsQuery,
  needs: SessionNeeds,
  filteredBy: SessionAttribute | undefined,
): boolean {
  return (
    query.filters.length > 0 &&
    filteredBy === undefined &&
    needs.dimension !== undefined &&
    (PATH_DIMENSIONS as readonly string[]).includes(needs.dimension) &&
    needs.metrics.every((m) => m === 'sessions') &&
    (needs.buckets ?? []).length === 0 &&
    wholeSiteDays(query)
  );
}

/**
 * Whether the order rollups (order_rollups, item_rollups, item_day_rollups; libs/stats/src/
 * rollups/order-rollup.ts) answer the query's orders, and purchase_rollups its purchasing
 * sessions: no filters (they keep no session attribute), and the range and report buckets are
 * whole quarter hours. The order rollups are written with the orders and have no tail; the
 * purchase rollup's tail is the queued sessions (purchasingSessionsByRollup).
 */
export function orderRollupsMayAnswer(query: StatsQuery, buckets: readonly Bucket[] = []): boolean {
  return query.tables !== 'raw' && query.filters.length === 0 && rollupCovers(query.range, buckets);
}

/**
 * Whether the conversion rollups (goal_rollups, converted_rollups; libs/stats/src/rollups/
 * goal-rollup.ts) count the query's converted sessions: they hold exactly the site's goals
 * (`goalsRolledUp`: a goal created since the last `aggregate` is not in them yet), the query
 * has no filters (they keep no entry page, page or goal of a session, and one attribute per
 * row), and the range and report buckets are whole quarter hours. Sessions queued for
 * aggregation are read from the raw tables on top of them (conversionTail).
 */
export function conversionRollupsMayAnswer(
  query: StatsQuery,
  goalsRolledUp: boolean,
  buckets: readonly Bucket[] = [],
): boolean {
  return (
    query.tables !== 'raw' &&
    goalsRolledUp &&
    query.filters.length === 0 &&
    rollupCovers(query.range, buckets)
  );
}

/**
 * Whether the stored goals of the settled sessions (session_goals; storedGoalSelection) may
 * select a conversions query's sessions: every condition is on `goal` and the goals are rolled
 * up (`goalsRolledUp`: session_goals holds exactly the site's goals). With `!=` conditions only,
 * the selected sessions are the range's others, whose counts the unfiltered conversion rollups
 * give (conversionRollupsMayAnswer). The queued sessions are read from the raw tables.
 */
export function storedGoalsMayAnswer(query: StatsQuery, goalsRolledUp: boolean): boolean {
  const selection = storedGoalSelection(query.filters);
  if (query.tables === 'raw' || !goalsRolledUp || selection === null) return false;
  return !selection.complement || conversionRollupsMayAnswer({ ...query, filters: [] }, goalsRolledUp);
}

/**
 * Whether a filtered conversions query may count its converted sessions from the goals stored
 * for the settled sessions (session_goals), testing the filters on each one's session: the
 * goals are rolled up (session_goals holds exactly the site's goals). The queued sessions are
 * read from the raw tables, the range's selected sessions as sessionTotals decides.
 */
export function storedConversionsMayAnswer(query: StatsQuery, goalsRolledUp: boolean): boolean {
  return query.tables !== 'raw' && goalsRolledUp && query.filters.length > 0;
}

/**
 * Whether the goal attribute rollups (goal_attribute_rollups, goal_attribute_day_rollups) may
 * count a filtered query's converted sessions, in all and by goal: every condition is on a
 * session attribute (their rows carry all five, as the attribute rollup's), the goals are
 * rolled up, and the range and `buckets` are whole quarter hours. The queued sessions are read
 * from the raw tables on top of them (conversionTail).
 */
export function goalAttributeRollupsMayAnswer(
  query: StatsQuery,
  goalsRolledUp: boolean,
  buckets: readonly Bucket[] = [],
): boolean {
  return (
    query.tables !== 'raw' &&
    goalsRolledUp &&
    query.filters.length > 0 &&
    query.filters.every((f) => isSessionAttribute(f.dimension)) &&
    rollupCovers(query.range, buckets)
  );
}

/**
 * Whether the event rollups (event_rollups, event_links; libs/stats/src/rollups/
 * event-rollup.ts) count the query's event hits and their sessions: no filters (they keep no
 * session attribute) and whole quarter hours. Sessions queued for aggregation are read from
 * the raw tables on top of them.
 */
export function eventRollupsMayAnswer(query: StatsQuery): boolean {
  return query.tables !== 'raw' && query.filters.length === 0 && rollupCovers(query.range);
}

/** The page condition the page event rollups answer (pageEventRollupsPage). */
export interface RolledUpPage {
  /** A whole path page_key tells apart. */
  readonly path: string;
  /** `page!=` the path: the site's event rollups less the path's. */
  readonly without: boolean;
}

/**
 * The page condition whose page event rollups (page_event_rollups, page_event_links; migration
 * 1769200000000) count the query's event hits and their sessions, or undefined: the query's one
 * condition is `page==` or `page!=` one whole path, over whole quarter hours, outside the raw
 * path. A session counts under each of its paths, so a prefix or several values would count a
 * session once for each of them; `page!=` one path selects the sessions `page==` leaves, each
 * wholly in or out, so their counts are the site's less the path's. Queued sessions are read
 * from the raw tables on top of them.
 */
export function pageEventRollupsPage(query: StatsQuery): RolledUpPage | undefined {
  if (query.tables === 'raw' || !rollupCovers(query.range)) return undefined;
  const page = soleWholePage(query.filters);
  return page === undefined ? undefined : { path: page.value.text, without: page.without };
}

/**
 * A query whose one condition is `page!=` one path as the site's query less the path's: the
 * site's rollups less the path's session_pages rows (sharedStatements.sessionTotals and the
 * report statements that name this), or undefined. A session either has a pageview of the path or not, so its sessions are the range's
 * less those `page==` the path selects: the rollups' sums less the sums of the path's rows. Only
 * while those rows are current (StatsQuery.pageRowsCurrent: no queued session gained the path
 * since it was derived), so that a session has a row under it exactly when one of its hits is a
 * pageview of it; and only for what the site's rollups of `source` answer over the range: the
 * session rollups, totals or by one attribute, entry or exit page and report bucket (the
 * breakdowns, the overview's lists: the path's rows carry the session's attributes, pages and
 * start), or for the pageviews of the selected sessions (their own ts in the range), the
 * pageview rollup, totals only. Visitors are distinct and do not subtract.
 */
export function sessionPagesComplement(
  query: StatsQuery,
  needs: SessionNeeds,
  source: 'sessions' | 'hits' = 'sessions',
): PageComplement | undefined {
  const page = pageEventRollupsPage(query);
  if (page?.without !== true || query.pageRowsCurrent !== true) return undefined;
  if (source !== 'sessions' && (needs.dimension !== undefined || (needs.buckets ?? []).length > 0)) {
    return undefined;
  }
  const site: StatsQuery = { ...query, filters: [] };
  const table = decideTable(site, source, needs);
  const rolledUp = source === 'sessions' ? table.rollupTable === 'session_rollups' : table.kind === 'rollup';
  if (!rolledUp) return undefined;
  return {
    path: page.path,
    site,
    page: { ...query, filters: query.filters.map((f) => ({ ...f, operator: '==' as const })) },
  };
}

/** A `page!=` query as the site's less the path's (sessionPagesComplement). */
export interface PageComplement {
  readonly path: string;
  /** The query without its condition: the range's sessions. */
  readonly site: StatsQuery;
  /** The query under `page==` the path: its session_pages rows, current. */
  readonly page: StatsQuery;
}

/**
 * Whether the selected sessions' event hits of the range may be read from their rows of
 * session_event_buckets (sql/pageviews-by-session.ts eventsThroughSessions): whole quarter hours,
 * the buckets of those rows, outside the raw path.
 */
export function eventBucketsMayAnswer(query: StatsQuery): boolean {
  return query.tables !== 'raw' && rollupCovers(query.range);
}

/**
 * Whether visitor sketches could count this query's visitors (libs/stats/src/rollups/
 * visitor-sketch.ts): the site's sketches hold every session of a site, those by attribute
 * value (visitor_value_sketches) the sessions of one value, so no filter or filters on one
 * session attribute only (the sketches of the values they select merge into the sketch of
 * their sessions; two attributes would need an intersection, which a sketch cannot give within
 * 1 %), or conditions on several attributes whose combinations the request listed (those by
 * combination: combinationSketchesMayAnswer); SPEC §1 allows an estimate over more than one day
 * only; the range is whole quarter hours, as the rollups.
 */
export function visitorSketchesMayAnswer(query: StatsQuery): boolean {
  return (
    query.tables !== 'raw' &&
    (query.filters.length === 0 ||
      soleAttributeOf(query.filters) !== undefined ||
      combinationSketchesMayAnswer(query)) &&
    query.range.days > 1 &&
    rollupCovers(query.range)
  );
}

/**
 * Whether the sketches by combination of attributes (visitor_combination_sketches) hold this
 * query's sessions: every condition is on a session attribute, on two attributes or more, and the
 * request listed the combinations they select (SessionScope.combinations), whose sketches merge
 * into the sketch of the selected sessions.
 */
export function combinationSketchesMayAnswer(query: StatsQuery): boolean {
  return (
    query.filters.length > 0 &&
    query.filters.every((f) => isSessionAttribute(f.dimension)) &&
    selectsFewCombinations(query)
  );
}

/**
 * How the visitors of a range are counted, where an exact count would read `sessions` sessions
 * (the range's, filtered or not): exactly over the sessions, or from the sketches where they
 * may answer and that is more than `exactUpTo` sessions (an exact count costs about as much as
 * reading those sessions).
 */
export function decideVisitorCount(
  query: StatsQuery,
  sessions: number,
  exactUpTo: number,
): 'exact' | 'sketch' {
  return visitorSketchesMayAnswer(query) && sessions > exactUpTo ? 'sketch' : 'exact';
}
