import { tableWithIndexMarker } from '@app/db/dialect';
import { Expression, RawBuilder, sql, SqlBool } from 'kysely';
import { anyGoal, GoalDefinition } from '../conversions';
import {
  HITS_BY_SESSION,
  HITS_BY_STEP,
  isSessionAttribute,
  pageviewPathIsAny,
  textMatch,
} from '../definitions';
import type { FilterCondition, FilterValue } from '../query/filters';
import { col } from './col';
import {
  complementedPage,
  pageKeyUnderAny,
  pageRowAttributes,
  SESSION_PAGES,
  SESSION_PAGES_BY_SESSION,
  sessionPageRows,
  sessionPagesPaths,
} from './session-pages';

/** A parsed condition, with the site's goals it names when it is on `goal` (StatsQueryParser resolves them). */
export interface StatsFilter extends FilterCondition {
  goals?: readonly GoalDefinition[];
}

/** What selects sessions: the filters, and the site whose sessions they are. */
export interface SessionScope {
  readonly site: { readonly id: number };
  readonly filters: readonly StatsFilter[];
  /** `raw`: the parity reference (StatsQuery.tables), which reads a page or goal condition by session. */
  readonly tables?: 'auto' | 'raw';
  /**
   * The site's combinations of the five attributes that the conditions on attributes select,
   * when they are at most LISTED_COMBINATIONS (StatsQueryParser reads them once per request),
   * as the hex text of their hash: the statements then name them instead of each selecting them
   * among the site's.
   */
  readonly combinations?: readonly string[];
  /**
   * True when session_pages held, as the request was parsed, every derived session of the site
   * under each path of the `page==` condition's values that its hits have (StatsQueryParser,
   * under a condition session_pages may answer): session-pages.ts.
   */
  readonly pageRowsCurrent?: boolean;
  /**
   * Under a `page==` condition with a prefix read from session_pages: the page_keys under its
   * values as the request was parsed, when at most PREFIX_KEYS (StatsRepository.prefixPageKeys).
   * The statements then read each key's range of starts instead of every row of the prefix
   * (sessionsSource).
   */
  readonly pageKeys?: readonly string[];
}

/**
 * How many selected combinations a request lists at most (StatsQueryParser). Listed, their day
 * rows and sketches are read by key and the visitors merged from the sketches in the API; past
 * the limit each statement selects them itself and the visitors are an exact distinct count. At
 * 10M pageviews listing was 2–3× faster up to 10,473 combinations (engagement under 5,076 of
 * them 2.6 s → 0.9 s, the API's CPU ~230 ms a request); at 1M, where a combination holds fewer
 * sessions, it was as fast up to 6,711 and slower at 10,775 (BENCHMARKS.md run BK).
 */
export const LISTED_COMBINATIONS = 6_000;

/** ` AND condition`, or nothing when there is no condition: unfiltered SQL stays as it was. */
export function andAlso(condition: RawBuilder<SqlBool> | null): RawBuilder<unknown> {
  return condition === null ? sql`` : sql` AND ${condition}`;
}

/** Any of the values matches `column` (SPEC §3: the values of a condition are alternatives). */
function anyValue(column: Expression<unknown>, values: readonly FilterValue[]): RawBuilder<SqlBool> {
  const exact = values.filter((v) => !v.prefix).map((v) => v.text);
  const parts = values.filter((v) => v.prefix).map((v) => textMatch(column, v.text, true));
  if (exact.length > 0) parts.unshift(sql<SqlBool>`${column} IN (${sql.join(exact)})`);
  return sql<SqlBool>`(${sql.join(parts, sql` OR `)})`;
}

/**
 * The site's sessions with at least one hit for which `match` holds over hits `fp`, as the
 * set `(site_id, session_id)` for an `IN` test. MariaDB picks, per statement, how to use it: it
 * builds the set once from the hits' step index (site, type, step_key, …, session_id) when the
 * set is small and the statement tests many sessions (the range's sessions under one blog
 * post's page), and looks each tested session's hits up in their own index otherwise (a range's
 * ragged edges, a pageview's session, and a set too large for its temporary table: at 10M
 * pageviews page==/pricing, 22 % of the sessions). At 10M under one blog post, the overview's
 * statements 7.1–8.1 s → 0.08–0.22 s, where each session's hits had been looked up
 * (docs/decisions/filters.md). SQLite reads the first index named (the step index; the session
 * index where `bySession`): it builds an `IN` set once in any case.
 *
 * `bySession` names the session index alone: for statements that test few sessions (the orders
 * of a range), and for the raw computation (`tables: 'raw'`, the parity reference, run without a
 * time budget). With both named, MariaDB sometimes looked each tested session's hits up in the
 * step index, reading every hit of the page again for each one (FirstMatch over
 * `ix_hits_site_step`), depending on the sampled statistics of the moment: at the benchmark's
 * smoke size 66k pageviews × 18k `/pricing` hits (105 s instead of 0.24 s), and e-commerce
 * under `page==/pricing` 870 orders × 18k (3.4 s instead of 0.05 s).
 */
function sessionsWithHit(
  scope: SessionScope,
  match: RawBuilder<SqlBool>,
  bySession: boolean,
): RawBuilder<unknown> {
  const indexes = bySession || scope.tables === 'raw' ? [HITS_BY_SESSION] : [HITS_BY_STEP, HITS_BY_SESSION];
  const hits = tableWithIndexMarker('hits', 'fp', indexes);
  return sql`(SELECT fp.site_id, fp.session_id FROM ${sql.raw(hits)} WHERE fp.site_id = ${scope.site.id} AND ${match})`;
}

/** The `==` side of a condition over the sessions row `s`: true exactly for the sessions it selects. */
function selects(
  filter: StatsFilter,
  s: string,
  scope: SessionScope,
  bySession: boolean,
): RawBuilder<SqlBool> {
  switch (filter.dimension) {
    case 'channel':
    case 'source':
    case 'country':
    case 'device':
    case 'browser':
      // Stored as the session reads it: a missing attribute is the word `(unknown)` / `(direct)`.
      return anyValue(col(s, filter.dimension), filter.values);
    case 'entry_page':
    case 'exit_page': {
      const column = col(s, filter.dimension === 'entry_page' ? 'entry_path' : 'exit_path');
      // A session without pageviews has no entry or exit page: it fails ==, and so passes !=.
      return sql<SqlBool>`(${column} IS NOT NULL AND ${anyValue(column, filter.values)})`;
    }
    case 'page': {
      const match = sql<SqlBool>`fp.type = 'pageview' AND ${pageviewPathIsAny('fp', filter.values)}`;
      return sql<SqlBool>`(${col(s, 'site_id')}, ${col(s, 'session_id')}) IN ${sessionsWithHit(scope, match, bySession)}`;
    }
    case 'goal': {
      if (!filter.goals) throw new Error('a goal filter reached SQL without its goals resolved');
      // SPEC §1 "Conversion": a hit of the session matches one of the goals (goalMatch).
      if (filter.goals.length === 0) return sql<SqlBool>`(1 = 0)`;
      return sql<SqlBool>`(${col(s, 'site_id')}, ${col(s, 'session_id')}) IN ${sessionsWithHit(scope, anyGoal('fp', filter.goals), bySession)}`;
    }
  }
}

/**
 * The one place that turns a query's filters into the sessions it selects (SPEC §3): a
 * condition over the sessions row `s`, every condition holding. With no filters, every session.
 * `bySession`: the statement tests few sessions, each looked up by key (sessionsWithHit).
 */
export function sessionSelected(
  scope: SessionScope,
  s: string,
  bySession = false,
): RawBuilder<SqlBool> | null {
  const { filters } = scope;
  if (filters.length === 0) return null;
  const each = filters.map((f) => {
    const selected = selects(f, s, scope, bySession);
    if (f.operator === '==') return selected;
    // A page or goal condition is a row value IN a set of (site_id, session_id), never NULL (both
    // columns NOT NULL on either side): IS NOT TRUE is NOT there. SQLite, for NOT, scanned the
    // whole set for a NULL for each session the set did not hold: at 100k pageviews, the 30k
    // sessions under page!=/pricing 10.8 s (the report 503), with IS NOT TRUE 72 ms.
    return f.dimension === 'page' || f.dimension === 'goal'
      ? sql<SqlBool>`(${selected} IS NOT TRUE)`
      : sql<SqlBool>`NOT ${selected}`;
  });
  return sql<SqlBool>`(${sql.join(each, sql` AND `)})`;
}

/** The conditions on session attributes among `scope`'s filters. */
const attributeConditions = (scope: SessionScope) =>
  scope.filters.filter((f) => isSessionAttribute(f.dimension));

/**
 * The site's combinations of the five attributes that the conditions on attributes select, as
 * `fc.attributes_hash` of attribute_combinations `fc`; null without such a condition.
 */
export function combinationsSelectedIn(scope: SessionScope): RawBuilder<SqlBool> | null {
  const selected = sessionSelected({ ...scope, filters: attributeConditions(scope) }, 'fc');
  return selected === null ? null : sql<SqlBool>`fc.site_id = ${scope.site.id} AND ${selected}`;
}

/**
 * Under conditions on session attributes, outside the raw path: the sessions row `s` has one
 * of the combinations of the five attributes that those conditions select, among the site's
 * combinations (attribute_combinations, migration 1767700000000; `aggregate` adds each derived
 * session's there in the transaction that writes it, so a session's is always there): those
 * the request listed (`scope.combinations`), or else those the statement selects itself.
 * It selects no session the conditions do not, and every session they do: a condition on
 * attributes is a test of the combination's values. In place of the conditions, it lets a
 * statement over the range's sessions read those of the selected combinations
 * (ix_sessions_site_combination), not every session of the range tested one by one.
 */
export function combinationSelected(scope: SessionScope, s: string): RawBuilder<SqlBool> | null {
  if (scope.tables === 'raw') return null;
  const selected = combinationsSelectedIn(scope);
  if (selected === null) return null;
  if (scope.combinations !== undefined) {
    return scope.combinations.length === 0
      ? sql<SqlBool>`(1 = 0)`
      : sql<SqlBool>`${col(s, 'attributes_hash')} IN (${hashLiterals(scope.combinations)})`;
  }
  return sql<SqlBool>`${col(s, 'attributes_hash')} IN (SELECT fc.attributes_hash FROM attribute_combinations fc WHERE ${selected})`;
}

/**
 * Whether the conditions on session attributes name two attributes or more: only then may
 * their combinations be few enough to list (a request under conditions on one attribute reads
 * rollups of that attribute, and one attribute's values may select most combinations: `US`,
 * 29k of the benchmark's 85,943).
 */
export function conditionsOnSeveralAttributes(scope: SessionScope): boolean {
  return new Set(attributeConditions(scope).map((f) => f.dimension)).size >= 2;
}

/** The list of hashes as SQL, by the list a request holds (StatsQuery.combinations). */
const HASH_LITERALS = new WeakMap<readonly string[], RawBuilder<unknown>>();

/**
 * The 16-byte hashes as a list of literals (`X'…', X'…'`, the same on both engines): the SQLite
 * read pool's children take no binary parameters. Only hex text is written into the SQL. Written
 * once per list: every statement of a request names the same list, and at a few thousand
 * combinations a node and a pattern test per hash per statement cost the API ~50 ms of CPU a
 * request at 1M (BENCHMARKS.md run BK).
 */
export function hashLiterals(hexes: readonly string[]): RawBuilder<unknown> {
  let list = HASH_LITERALS.get(hexes);
  if (list === undefined) {
    const bad = hexes.find((hex) => !/^[0-9a-f]{32}$/i.test(hex));
    if (bad !== undefined) throw new Error(`not a 16-byte hash in hex: ${bad}`);
    list = sql.raw(hexes.map((hex) => `X'${hex}'`).join(', '));
    HASH_LITERALS.set(hexes, list);
  }
  return list;
}

/**
 * Whether the request listed the combinations its conditions select: at most
 * LISTED_COMBINATIONS of them (at 10M pageviews, `country==DE|FR;device!=mobile;channel==…`
 * selects 217 of the site's 85,943, where a condition on one attribute may select most of them).
 */
export function selectsFewCombinations(scope: SessionScope): boolean {
  return scope.tables !== 'raw' && scope.combinations !== undefined;
}

/**
 * The same selection for rows that carry a session id (hits, orders) aliased `row`: their
 * session is selected. A row whose session `aggregate` has not derived yet belongs to no
 * selected session (as it has no attributes yet). `bySession` as for sessionSelected. Under
 * `page==` paths or prefixes whose session_pages rows are current (sessionPagesPaths), the
 * session's row there under one of them.
 */
export function rowOfSelectedSession(
  scope: SessionScope,
  row: string,
  bySession = false,
): RawBuilder<SqlBool> | null {
  if (scope.filters.length === 0) return null;
  const pageRow = pageRowOfSession(scope, row) ?? (bySession ? noPageRowOfSession(scope, row) : undefined);
  if (pageRow !== undefined) return pageRow;
  return sql<SqlBool>`EXISTS (SELECT 1 FROM sessions fs WHERE fs.site_id = ${col(row, 'site_id')} AND fs.session_id = ${col(row, 'session_id')}${andAlso(sessionSelected(scope, 'fs', bySession))})`;
}

/** ` AND` the session row `alias` started in `startedIn`, when given. */
function startedWithin(alias: string, startedIn?: { startUtc: Date; endUtc: Date }): RawBuilder<unknown> {
  return startedIn === undefined
    ? sql``
    : sql` AND ${sql.raw(alias)}.started_at >= ${startedIn.startUtc} AND ${sql.raw(alias)}.started_at < ${startedIn.endUtc}`;
}

/**
 * Under `page==` paths or prefixes whose session_pages rows are current (sessionPagesPaths): the
 * session of row `row` (which carries site_id and session_id) has a row there under them, with the
 * attributes the conditions beside select, and, given `startedIn`, a start in that interval (the
 * session's start: `aggregate` writes a session's rows there with its row). Undefined otherwise.
 * The row is looked up through SESSION_PAGES_BY_SESSION (which holds page_key) whatever the
 * statistics say: the key's (site, page_key) prefix would read every row of the path for each
 * session. Not for an entry or exit page condition (sessionPageRows): its test of the session's
 * row is a look-up too, by key.
 */
export function pageRowOfSession(
  scope: SessionScope,
  row: string,
  startedIn?: { startUtc: Date; endUtc: Date },
): RawBuilder<SqlBool> | undefined {
  const page = sessionPageRows(scope);
  if (page === undefined || page.endpoint !== undefined) return undefined;
  const rows = tableWithIndexMarker(SESSION_PAGES, 'fs', SESSION_PAGES_BY_SESSION);
  return sql<SqlBool>`EXISTS (SELECT 1 FROM ${sql.raw(rows)} WHERE fs.site_id = ${col(row, 'site_id')} AND fs.session_id = ${col(row, 'session_id')}${startedWithin('fs', startedIn)} AND ${pageKeyUnderAny('fs', page.values)}${andAlso(pageRowAttributes(scope, page, 'fs'))})`;
}

/**
 * The path of `scope`'s `page!=` one path (complementedPage) outside the raw path while its
 * session_pages rows are current (StatsQuery.pageRowsCurrent): a session has a row under it
 * exactly when one of its hits is a pageview of it. Undefined otherwise.
 */
function currentComplementedPage(scope: SessionScope): readonly FilterValue[] | undefined {
  if (scope.tables === 'raw' || scope.pageRowsCurrent !== true) return undefined;
  return complementedPage(scope.filters);
}

/**
 * Under `page!=` one path whose session_pages rows are current (complementedPage,
 * StatsQuery.pageRowsCurrent): the session of row `row` (which carries site_id and session_id) is
 * derived, with a start in `startedIn` when given, and has no row there under the path. A derived
 * session has a row under the path exactly when one of its hits is a pageview of it while the
 * rows are current, so this selects what the raw condition does. Two look-ups by key for each
 * row, for rows that are few beside the range's sessions (a range's orders), where the condition
 * on the hits builds the set of every session with a pageview of the path (at 10M pageviews under
 * `page!=/pricing`, some 700k) for each statement. Undefined otherwise.
 */
export function noPageRowOfSession(
  scope: SessionScope,
  row: string,
  startedIn?: { startUtc: Date; endUtc: Date },
): RawBuilder<SqlBool> | undefined {
  const pages = currentComplementedPage(scope);
  if (pages === undefined) return undefined;
  const rows = tableWithIndexMarker(SESSION_PAGES, 'fp', SESSION_PAGES_BY_SESSION);
  const sessionRow = sql<SqlBool>`EXISTS (SELECT 1 FROM sessions fs WHERE fs.site_id = ${col(row, 'site_id')} AND fs.session_id = ${col(row, 'session_id')}${startedWithin('fs', startedIn)})`;
  // Without a start to test, a session that is not queued is derived: import queues a session in
  // the transaction that writes its hits, and `aggregate` dequeues it in the one that writes its
  // row. So its row is read only for a queued session, and the queue's few entries are probed
  // instead of the sessions table (at 10M pageviews, the range's 89k orders under page!=/pricing).
  const derived =
    startedIn === undefined
      ? sql<SqlBool>`(NOT EXISTS (SELECT 1 FROM dirty_sessions fq WHERE fq.site_id = ${col(row, 'site_id')} AND fq.session_id = ${col(row, 'session_id')}) OR ${sessionRow})`
      : sessionRow;
  return sql<SqlBool>`(${derived} AND NOT EXISTS (SELECT 1 FROM ${sql.raw(rows)} WHERE fp.site_id = ${col(row, 'site_id')} AND fp.session_id = ${col(row, 'session_id')} AND ${pageKeyUnderAny('fp', pages)}))`;
}

/**
 * Under `page!=` one path whose session_pages rows are current (complementedPage,
 * StatsQuery.pageRowsCurrent): sessions row `s` has no row under the path, one look-up of the
 * rows' primary key (site, page_key, started_at, session_id), where the condition on the hits
 * builds the set of every session with a pageview of the path from those hits for each statement.
 * The rows are written with the session's row and its start, and while they are current a
 * session has a row under the path exactly when one of its hits is a pageview of it, so this
 * selects what the raw condition does. At 10M pageviews under `page!=/pricing`, the overview's
 * statement of session totals and distinct visitors over the range's 3.05M sessions took
 * 17.9 s with the set, 9.7 s with the look-up (by hand); the overview 33.9 -> 12.3 s, engagement
 * 13.8 -> 10.7 s with a 60-s budget (BENCHMARKS.md run CB). Undefined otherwise.
 */
export function noPageRowOfSessionsRow(scope: SessionScope, s: string): RawBuilder<SqlBool> | undefined {
  const pages = currentComplementedPage(scope);
  if (pages === undefined) return undefined;
  return sql<SqlBool>`NOT EXISTS (SELECT 1 FROM ${sql.raw(SESSION_PAGES)} fp WHERE fp.site_id = ${col(s, 'site_id')} AND ${pageKeyUnderAny('fp', pages)} AND fp.started_at = ${col(s, 'started_at')} AND fp.session_id = ${col(s, 'session_id')})`;
}

/**
 * The settled session of sessions row `s`, already read by key, is selected: under `page==` paths
 * or prefixes whose session_pages rows are current (sessionPagesPaths), its row there under them,
 * looked up by session (rowOfSelectedSession); otherwise sessionSelected. A settled session's
 * rows there are its row's, so the two select the same sessions; the look-up reads one index
 * entry where the condition tests the session against its hits (or builds the path's set of
 * sessions from every hit of the path).
 */
export function settledSessionSelected(scope: SessionScope, s: string): RawBuilder<SqlBool> | null {
  return sessionPagesPaths(scope) === undefined ? sessionSelected(scope, s) : rowOfSelectedSession(scope, s);
}

/**
 * A queued session of sessions row `s` (dirty_sessions joined to sessions, so read by key) is
 * selected, as the raw path selects it by its hits. Under `page==` paths or prefixes whose
 * session_pages rows are current (sessionPagesPaths), its row there: no queued session lacks a
 * row under them that its hits have (StatsRepository.pageRowsCurrent), and its rows were written
 * with its row in `sessions`. Otherwise sessionSelected with each session's hits looked up by
 * session (`bySession`). The queue holds the sessions of the hits imported since `aggregate` last
 * ran, few beside the range's, where a page or goal condition may build the set of every session
 * with a matching hit (at 10M pageviews under `page==/pricing`, some 700k sessions).
 */
export function queuedSessionSelected(scope: SessionScope, s: string): RawBuilder<SqlBool> | null {
  return sessionPagesPaths(scope) === undefined
    ? sessionSelected(scope, s, true)
    : rowOfSelectedSession(scope, s);
}

/**
 * The selection over a rollup's `value` column, for the rollup of the one session attribute
 * every condition is on (decideTable picks the rollup only then).
 */
export function rollupValueSelected(
  filters: readonly StatsFilter[],
  value: Expression<unknown>,
): RawBuilder<SqlBool> | null {
  if (filters.length === 0) return null;
  const each = filters.map((f) =>
    f.operator === '==' ? anyValue(value, f.values) : sql<SqlBool>`NOT ${anyValue(value, f.values)}`,
  );
  return sql<SqlBool>`(${sql.join(each, sql` AND `)})`;
}

/**
 * The session of row `row` (a sessions row, or a stored goal's) has a goal stored for it
 * (session_goals): one of `goalIds` when given; with a lower id than the stored goal's row
 * `before` when given (so that, negated, `before` is its session's first stored goal).
 */
export function storedGoalExists(
  row: string,
  options: { goalIds?: readonly number[]; before?: string } = {},
): RawBuilder<SqlBool> {
  const { goalIds, before } = options;
  const among = goalIds === undefined ? sql`` : sql` AND stored_goal.goal_id IN (${sql.join(goalIds)})`;
  const earlier = before === undefined ? sql`` : sql` AND stored_goal.goal_id < ${col(before, 'goal_id')}`;
  return sql<SqlBool>`EXISTS (SELECT 1 FROM session_goals stored_goal WHERE stored_goal.site_id = ${col(row, 'site_id')} AND stored_goal.session_id = ${col(row, 'session_id')}${among}${earlier})`;
}

/**
 * The filters as a selection of settled sessions by the goals stored for them (session_goals:
 * each derived session's converted goals, by the same match as the `goal` condition, from all
 * its hits), when every condition is on `goal`; null otherwise. For a session whose row
 * reflects all its hits (not queued in dirty_sessions) and goals that are rolled up, a stored
 * goal is exactly a matching hit, so this selects the sessions sessionSelected does.
 *
 * - With an `==` condition, every selected session converted one of its goals (`base`): the
 *   sessions are read from those goals' rows, and `rest` tests the other conditions on each.
 * - With `!=` conditions only, the selected sessions are those that converted none of their
 *   goals: `complement`, with `base` the goals of every condition; the caller counts the
 *   sessions that converted one of them and takes them from the range's sessions.
 *
 * `counted` is the filters whose sessions the caller counts, as sessionSelected reads them (for
 * the queued sessions): the query's, or with `complement` one `goal==` condition over `base`.
 */
export interface StoredGoalSelection {
  readonly base: readonly number[];
  readonly complement: boolean;
  readonly counted: readonly StatsFilter[];
  readonly rest: (s: string) => RawBuilder<SqlBool> | null;
}

export function storedGoalSelection(filters: readonly StatsFilter[]): StoredGoalSelection | null {
  if (filters.length === 0 || filters.some((f) => f.dimension !== 'goal')) return null;
  const goalsOf = (f: StatsFilter) => {
    if (!f.goals) throw new Error('a goal filter reached SQL without its goals resolved');
    return f.goals;
  };
  const first = filters.findIndex((f) => f.operator === '==');
  if (first < 0) {
    const goals = [...new Map(filters.flatMap(goalsOf).map((g) => [g.id, g])).values()];
    const values = goals.map((g) => ({ text: String(g.id), prefix: false }));
    return {
      base: goals.map((g) => g.id),
      complement: true,
      counted: [{ dimension: 'goal', operator: '==', values, goals }],
      rest: () => null,
    };
  }
  const others = filters.filter((_, i) => i !== first);
  const stored = (f: StatsFilter, s: string) => {
    const any = storedGoalExists(s, { goalIds: goalsOf(f).map((g) => g.id) });
    return f.operator === '==' ? any : sql<SqlBool>`NOT ${any}`;
  };
  return {
    base: goalsOf(filters[first]).map((g) => g.id),
    complement: false,
    counted: filters,
    rest: (s) =>
      others.length === 0
        ? null
        : sql<SqlBool>`(${sql.join(
            others.map((f) => stored(f, s)),
            sql` AND `,
          )})`,
  };
}
