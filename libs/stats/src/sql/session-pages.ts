import { sql, SqlBool, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import { isSessionAttribute, pathKeyIs, SESSION_ATTRIBUTES, STEP_KEY_CHARS, textMatch } from '../definitions';
import type { FilterValue } from '../query/filters';
import { tableWithIndexMarker, type SqlDialect } from '@app/db/dialect';
import { andAlso, sessionSelected, type SessionScope, type StatsFilter } from './session-filter';
import { siteKeysWhere } from './site-keys';
import { SESSION_ENGAGEMENT_COLUMNS } from './session-engagement';

/**
 * `session_pages` (migration 1768700000000): each derived session once for every path it has a
 * pageview of, keyed (site, page_key, started_at, session_id) with the columns `aggregate`
 * derives for it and its visitor's first session (SESSION_PAGE_COPIES, as the sessions table
 * holds them; the first session since migration 1769000000000), the session's page before it in
 * key order (`prior_page_key`, migration 1768800000000) and the hashes of its entry and exit
 * pages and of its combination of attributes, generated as in `sessions` and stored on MariaDB
 * (migration 1768900000000), which the overview's lists group by. `page_key` is the
 * path as `hits.step_key` keeps it, cut to STEP_KEY_CHARS characters. So the sessions a
 * condition `page==V` selects among a range's are one range of its primary key, read in order,
 * each with what the statement needs of it, where the sessions table tests each of the range's
 * sessions against its hits (at 10M pageviews, 3.2M sessions for the 680k that saw `/pricing`).
 * `aggregate` writes a session's rows in the transaction that writes its row in `sessions`.
 */
export const SESSION_PAGES = 'session_pages';

/**
 * The columns of `sessions` that deriving a session writes, in the order `aggregate` writes them
 * (deriveSessionsStatement); `visitor_first_at` is set after (copyFirstSessions).
 */
export const DERIVED_SESSION_COLUMNS = [
  'site_id',
  'session_id',
  'visitor_id',
  'started_at',
  'ended_at',
  'hits',
  'pageviews',
  'events',
  'purchases',
  'is_bounce',
  'duration_seconds',
  'entry_path',
  'exit_path',
  ...SESSION_ATTRIBUTES,
  'purchased',
  ...SESSION_ENGAGEMENT_COLUMNS,
] as const;

/**
 * The derived columns of `sessions` a session's rows in session_pages repeat beside their key's
 * site_id and started_at: what the rows held until migration 1769000000000.
 */
export const SESSION_PAGE_COLUMNS = DERIVED_SESSION_COLUMNS.filter(
  (c) => c !== 'site_id' && c !== 'started_at',
);

/**
 * Every column of `sessions` a session's rows repeat: SESSION_PAGE_COLUMNS and, since migration
 * 1769000000000, its visitor's first session (`visitor_first_at`, the copy `aggregate` keeps
 * equal to the visitors table's row), which engagement's returning split reads under a `page==`
 * condition instead of looking each row's visitor up.
 */
export const SESSION_PAGE_COPIES = [...SESSION_PAGE_COLUMNS, 'visitor_first_at'] as const;

/**
 * How many queued sessions of a site a request reads the hits of, at most, to tell whether
 * session_pages is current for its path (StatsRepository.pageRowsCurrent): each costs a few
 * index entries; a backlog past it leaves the request to test the hits.
 */
export const PAGE_CHECK_QUEUE = 20_000;

/**
 * How many page_keys under a prefix a request lists at most (StatsRepository.prefixPageKeys), so
 * that its statements read each key's range of starts (the 200 under `/products/` at 10M).
 */
export const PREFIX_KEYS = 1_000;

/** session_pages by session: what `aggregate` deletes before it writes a re-derived session's rows. */
export const SESSION_PAGES_BY_SESSION = 'ix_session_pages_session';

/**
 * session_pages by visitor (migration 1769300000000): (site_id, visitor_id, page_key, started_at,
 * session_id, prior_visit_at), each visitor's rows of one page_key in the order of their prior
 * visits, with all priorVisitsUpdate reads of them, so that it reads a chunk's visitors' rows from
 * this index alone.
 */
export const SESSION_PAGES_BY_VISITOR = 'ix_session_pages_visitor';

/**
 * `INSERT INTO session_pages … SELECT`: the rows of the sessions whose pageviews `where` selects
 * among `hits h` (siteKeysWhere for a chunk of `aggregate`; every pageview for the migration),
 * from their rows in `sessions`, one per distinct page_key, each with `prior_page_key`: the
 * session's page_key before it in key order (NULL for its first). A session without pageviews
 * has none (it fails every `page==` condition).
 *
 * The strings that start with a prefix are one run of that order (the binary collation's), so
 * exactly one of a session's rows under a prefix has no prior key under it: the row that counts
 * the session once under a `page==` prefix (pageRowsWhere).
 *
 * `columns`: the columns of `sessions` it copies, SESSION_PAGE_COPIES; a migration before
 * 1769000000000 names the ones the table had then (SESSION_PAGE_COLUMNS).
 */
export function sessionPagesInsert(
  where: RawBuilder<SqlBool>,
  columns: readonly string[] = SESSION_PAGE_COPIES,
): RawBuilder<unknown> {
  const copied = columns.map((c) => sql.ref(`s.${c}`));
  return sql`INSERT INTO ${sql.raw(SESSION_PAGES)} (site_id, page_key, prior_page_key, started_at, ${sql.raw(columns.join(', '))})
    SELECT s.site_id, p.page_key, p.prior_page_key, s.started_at, ${sql.join(copied)}
    FROM (SELECT d.site_id, d.session_id, d.page_key,
        LAG(d.page_key) OVER (PARTITION BY d.site_id, d.session_id ORDER BY d.page_key) AS prior_page_key
      FROM (SELECT DISTINCT h.site_id, h.session_id, h.step_key AS page_key FROM hits h WHERE ${where} AND h.type = 'pageview') d) p
    JOIN sessions s ON s.site_id = p.site_id AND s.session_id = p.session_id`;
}

/**
 * The rows of a site's sessions, deleted before they are written again, found through
 * SESSION_PAGES_BY_SESSION whatever the statistics say (`deleteWithIndex`: `DELETE … FROM
 * session_pages`, from SqlDialect).
 */
export function sessionPagesDelete(
  deleteWithIndex: string,
  siteId: number,
  sessionIds: readonly string[],
): RawBuilder<unknown> {
  return sql`${sql.raw(deleteWithIndex)} WHERE ${siteKeysWhere(new Map([[siteId, sessionIds]]))}`;
}

/**
 * `UPDATE session_pages … SET prior_visit_at` (migration 1769100000000) over every row of the
 * sessions of `visitors` (site → visitor ids): each row's prior visit, the start of the same
 * visitor's session before it in (started_at, session_id) order that has a row under the same
 * page_key (NULL for the visitor's first there), written where it differs. `aggregate` runs it in
 * the transaction that writes a chunk's rows, for the visitors of the chunk's sessions before and
 * after (a new session, a late earlier one, one that changed visitor); their rows are read from
 * SESSION_PAGES_BY_VISITOR alone, in the window's order. Until migration 1769300000000 their
 * sessions were found through SESSIONS_BY_VISITOR and each row read by SESSION_PAGES_BY_SESSION
 * and its primary key: at 10M pageviews 5.16 s of an hour's 20.67 s of statements (BENCHMARKS.md
 * run CC). Without `visitors`, every row of the table (the migration).
 *
 * So of the rows of one page_key whose start is in a range, exactly one a visitor has no prior
 * visit in that range (its first there): counting those counts the range's distinct visitors of
 * the page without a distinct count (firstVisitOfRange).
 */
export function priorVisitsUpdate(
  d: SqlDialect,
  visitors?: ReadonlyMap<number, readonly string[]>,
): { sql: string; parameters: readonly unknown[] } {
  const rows =
    visitors === undefined
      ? sql`FROM ${sql.raw(SESSION_PAGES)} sp`
      : sql`FROM ${sql.raw(d.tableWithIndex(SESSION_PAGES, 'sp', SESSION_PAGES_BY_VISITOR))}
        WHERE ${siteKeysWhere(visitors, 'sp', 'visitor_id')}`;
  const source = sql`SELECT w.site_id, w.page_key, w.started_at, w.session_id, w.prior_visit_at
    FROM (SELECT sp.site_id, sp.page_key, sp.started_at, sp.session_id, sp.prior_visit_at AS was,
        LAG(sp.started_at) OVER (PARTITION BY sp.site_id, sp.visitor_id, sp.page_key ORDER BY sp.started_at, sp.session_id) AS prior_visit_at
      ${rows}) w
    WHERE (w.was IS NULL) <> (w.prior_visit_at IS NULL) OR w.was <> w.prior_visit_at`.compile(d.builder);
  const on = ['site_id', 'page_key', 'started_at', 'session_id'].map((c) => `t.${c} = x.${c}`).join(' AND ');
  return {
    sql: d.updateFromRows(SESSION_PAGES, 't', source.sql, on, 'prior_visit_at'),
    parameters: source.parameters,
  };
}

/**
 * Of the session_pages rows `alias` of a request that reads them for `page==` one whole path and
 * nothing else (sessionPageRows), those that are their visitor's first of the range there: no
 * prior visit, or one before the range (priorVisitsUpdate). Counting them counts the distinct
 * visitors of the rows (SPEC §1 "Visitors"), a visitor's rows of one page_key being its sessions
 * under the path. Undefined for any other request: under a prefix or several values a visitor's
 * prior visit may be under another key, and beside conditions on attributes or as an entry or
 * exit page, of a session the condition does not select.
 */
export function firstVisitOfRange(
  scope: SessionScope & { readonly range: { readonly startUtc: Date } },
  alias: string,
): RawBuilder<SqlBool> | undefined {
  const rows = sessionPageRows(scope);
  if (rows === undefined || rows.endpoint !== undefined || rows.attributes.length > 0) return undefined;
  if (rows.values.length !== 1 || rows.values[0].prefix) return undefined;
  const prior = sql.ref(`${alias}.prior_visit_at`);
  return sql<SqlBool>`(${prior} IS NULL OR ${prior} < ${scope.range.startUtc})`;
}

/** A whole path that its page_key tells apart: shorter than page_key (STEP_KEY_CHARS characters). */
function wholeKey(value: FilterValue): boolean {
  // A longer path shares its page_key with every path of the same first STEP_KEY_CHARS characters.
  return !value.prefix && Array.from(value.text).length < STEP_KEY_CHARS;
}

/** A whole path or a prefix that page_key tells apart (pathKeyIs). */
function keyed(value: FilterValue): boolean {
  return wholeKey(value) || (value.prefix && Array.from(value.text).length <= STEP_KEY_CHARS);
}

/**
 * A path (or page_key) under `value`, in JS: equal to it, or starting with it when a prefix.
 * pathKeyIs says it in SQL (SUBSTRING(key, 1, n) = prefix); startsWith compares the same whole
 * characters. For the values and listed keys a request holds, never for rows.
 */
function keyUnder(key: string, value: FilterValue): boolean {
  return value.prefix ? key.startsWith(value.text) : key === value.text;
}

/**
 * `values` without those another of them covers: a path or prefix under a prefix among them
 * (`/blog/*|/blog/a` is `/blog/*`), and repeats; in their order otherwise. What is left selects
 * the same sessions, and no two of its values share a path.
 */
export function coveringValues(values: readonly FilterValue[]): FilterValue[] {
  // `p` selects every path `v` selects; both ways only when they are the same value.
  const covers = (p: FilterValue, v: FilterValue) => (p.prefix || !v.prefix) && keyUnder(v.text, p);
  return values.filter((v, i) => !values.some((p, j) => j !== i && covers(p, v) && (!covers(v, p) || j < i)));
}

/**
 * The values of the `page` condition a request may read session_pages for, or undefined: its
 * one condition that is not on a session attribute is `page==` whole paths shorter than page_key
 * or prefixes no longer than it, without those another of them covers (coveringValues). The
 * conditions on attributes are tested on the rows, which hold the session's attributes
 * (PageRows.attributes).
 */
export function pagesOfCondition(filters: readonly StatsFilter[]): readonly FilterValue[] | undefined {
  const others = filters.filter((f) => !isSessionAttribute(f.dimension));
  if (others.length !== 1) return undefined;
  const [f] = others;
  if (f.dimension !== 'page' || f.operator !== '==' || !f.values.every(keyed)) return undefined;
  return coveringValues(f.values);
}

/**
 * The one condition of `filters`, alone, when it is `page==` or `page!=` one whole path page_key
 * tells apart: that path as pagesOfCondition gives it for `page==` (a path of STEP_KEY_CHARS or
 * more is cut there), and whether it is negated.
 */
export function soleWholePage(
  filters: readonly StatsFilter[],
): { value: FilterValue; without: boolean } | undefined {
  if (filters.length !== 1) return undefined;
  const [f] = filters;
  const values = pagesOfCondition([{ ...f, operator: '==' }]);
  if (values?.length !== 1 || values[0].prefix) return undefined;
  return { value: values[0], without: f.operator === '!=' };
}

/**
 * Under `page!=` one whole path alone (soleWholePage), that path: the sessions it selects are the
 * range's less that path's rows (sessionPagesComplement), while those rows are current
 * (StatsQuery.pageRowsCurrent).
 */
export function complementedPage(filters: readonly StatsFilter[]): readonly FilterValue[] | undefined {
  const page = soleWholePage(filters);
  return page?.without === true ? [page.value] : undefined;
}

/**
 * The session_pages rows that are the sessions a request's one condition selects, read in place
 * of a test of each of the range's sessions (sessionsSource):
 *
 * - `page==` one whole path: its rows (pagesOfCondition).
 * - `page==` one prefix: of its paths' rows, the one of each session whose prior_page_key is not
 *   under it (sessionPagesInsert): a session counts once, however many of the paths it saw.
 * - `page==` several values: of their rows, each session's first under the first of the values
 *   it has a row under, prefixes first (pageRowsWhere): a session counts once.
 * - Beside any of these, conditions on session attributes (`attributes`): tested on those rows,
 *   which hold the session's attributes as its row in `sessions` does. Not beside an entry or
 *   exit page condition: without session_pages that is a test of each session's row, which under
 *   conditions on attributes reads only their combinations' sessions.
 * - `entry_page==` / `exit_page==` one whole path: the rows under it whose session entered (left)
 *   by it, `endpoint` = page_key. A session's entry and exit paths are paths of its pageviews, so
 *   its rows, written with its row in `sessions` from the same hits, hold one under each, with
 *   the same entry and exit paths as that row: those rows select exactly the sessions whose row
 *   the condition selects, queued or not.
 *
 * Entry and exit pages: one whole path only. At 1M pageviews, `entry_page==/|/pricing` read 212k
 * rows for the 120k sessions it selects among 301k, and engagement and breakdown pageviews were
 * slower than testing each session; under a prefix, a session's rows under its paths (`/blog/*`:
 * 207k at 1M) were as many as the range's sessions and no faster to read.
 */
export interface PageRows {
  /** The condition's values (pagesOfCondition); one whole path for an entry or exit page. */
  readonly values: readonly FilterValue[];
  readonly endpoint?: 'entry_path' | 'exit_path';
  /** The conditions on session attributes beside a `page==` condition, tested on its rows. */
  readonly attributes: readonly StatsFilter[];
}

/** PageRows for `filters`, or undefined (currency aside: sessionPageRows). */
export function pageRowsOfCondition(filters: readonly StatsFilter[]): PageRows | undefined {
  const values = pagesOfCondition(filters);
  if (values !== undefined) {
    const attributes = filters.filter((f) => isSessionAttribute(f.dimension));
    return { values, attributes };
  }
  if (filters.length !== 1) return undefined;
  const [f] = filters;
  if (f.dimension !== 'entry_page' && f.dimension !== 'exit_page') return undefined;
  if (f.operator !== '==' || f.values.length !== 1 || !wholeKey(f.values[0])) return undefined;
  return {
    values: f.values,
    endpoint: f.dimension === 'entry_page' ? 'entry_path' : 'exit_path',
    attributes: [],
  };
}

/**
 * The paths and prefixes under whose session_pages rows are the sessions `scope` selects, or
 * undefined: its one condition is `page==` values page_key tells apart (pagesOfCondition), it is
 * not the raw path, and those rows were current as the request was parsed (`pageRowsCurrent`: no
 * queued session had gained a pageview under them since it was last derived;
 * StatsRepository.pageRowsCurrent). A session then has a row under them exactly when one of its
 * hits is a pageview under them, which is what the raw condition tests, and the row holds what
 * its row in `sessions` holds.
 */
export function sessionPagesPaths(scope: SessionScope): readonly FilterValue[] | undefined {
  const rows = sessionPageRows(scope);
  return rows === undefined || rows.endpoint !== undefined ? undefined : rows.values;
}

/**
 * session_pages rows `alias`'s page_key is under `value` (a whole path or a prefix that page_key
 * tells apart: pagesOfCondition), with the key's range for the index.
 */
export function pageKeyUnder(alias: string, value: FilterValue): RawBuilder<SqlBool> {
  const under = pathKeyIs(sql.ref(`${alias}.page_key`), value.text, value.prefix);
  if (under === undefined) throw new Error(`session_pages cannot tell this path apart: ${value.text}`);
  return under;
}

/** session_pages rows `alias`'s page_key is under one of `values` (pageKeyUnder). */
export function pageKeyUnderAny(alias: string, values: readonly FilterValue[]): RawBuilder<SqlBool> {
  if (values.length === 1) return pageKeyUnder(alias, values[0]);
  return sql<SqlBool>`(${sql.join(
    values.map((v) => sql`(${pageKeyUnder(alias, v)})`),
    sql` OR `,
  )})`;
}

/**
 * `scope` for what reads settled sessions only (not queued in dirty_sessions: `settled` in
 * pageviews-by-session.ts): their session_pages rows are current whatever the queue holds. A
 * session's rows are written with its row, and only a queued session can have gained a path
 * since; `pageRowsCurrent` is false when one has (or past PAGE_CHECK_QUEUE queued sessions, which
 * the check does not read). So under such a `page==` condition the rows still answer for the
 * settled sessions, and only the queued ones need their hits tested (queuedSessionSelected).
 */
export function settledSessionsScope<T extends SessionScope>(scope: T): T {
  return scope.pageRowsCurrent === false ? { ...scope, pageRowsCurrent: true } : scope;
}

/**
 * The session_pages rows that are the sessions `scope` selects (PageRows), or undefined: not on
 * the raw path, and for `page==` only while its rows are current (`pageRowsCurrent`). An entry or
 * exit page condition needs no such check: it tests the session's row, not its hits, and a
 * session's rows are written with that row.
 */
export function sessionPageRows(scope: SessionScope): PageRows | undefined {
  if (scope.tables === 'raw') return undefined;
  const rows = pageRowsOfCondition(scope.filters);
  if (rows === undefined || (rows.endpoint === undefined && scope.pageRowsCurrent !== true)) return undefined;
  return rows;
}

/**
 * The rows of `rows` among the session_pages rows `alias` of a site, one a session, each with the
 * attributes its conditions on attributes select: under its path and with that path as their
 * endpoint; under its one value and the session's first there (valueRows); under several values,
 * the session's first under the first of them it has a row under, in the order prefixes first,
 * then paths (each as given): under the first, as for one value; under a later one, as for one
 * value and with no row of the session under those before it, looked up by session
 * (SESSION_PAGES_BY_SESSION: a few entries a session). A prior key cannot tell that: a key under
 * none of the values may come between a session's rows under two of them. The first value's rows,
 * most of the rows where it is a prefix, are read without a look-up: at 10M pageviews, a look-up
 * for every row of `/products/*|/pricing` (3.3M rows) took its overview from 22 to 41 s.
 */
function pageRowsWhere(scope: SessionScope, rows: PageRows, alias: string): RawBuilder<SqlBool> {
  const attributes = andAlso(pageRowAttributes(scope, rows, alias));
  if (rows.endpoint !== undefined) {
    return sql<SqlBool>`${pageKeyUnder(alias, rows.values[0])}${attributes} AND ${sql.ref(`${alias}.${rows.endpoint}`)} = ${sql.ref(`${alias}.page_key`)}`;
  }
  if (rows.values.length === 1) return sql<SqlBool>`${valueRows(scope, rows.values[0], alias)}${attributes}`;
  const ordered = [...rows.values.filter((v) => v.prefix), ...rows.values.filter((v) => !v.prefix)];
  const earlier = `${alias}_e`;
  const table = tableWithIndexMarker(SESSION_PAGES, earlier, SESSION_PAGES_BY_SESSION);
  const branches = ordered.map((value, i) => {
    const own = valueRows(scope, value, alias);
    if (i === 0) return sql<SqlBool>`(${own})`;
    return sql<SqlBool>`(${own} AND NOT EXISTS (SELECT 1 FROM ${sql.raw(table)} WHERE ${sql.ref(`${earlier}.site_id`)} = ${sql.ref(`${alias}.site_id`)} AND ${sql.ref(`${earlier}.session_id`)} = ${sql.ref(`${alias}.session_id`)} AND ${pageKeyUnderAny(earlier, ordered.slice(0, i))}))`;
  });
  return sql<SqlBool>`(${sql.join(branches, sql` OR `)})${attributes}`;
}

/**
 * The rows `alias` under `value`, each session's first there: every row under a whole path; under
 * a prefix, the row whose prior_page_key is not under it (sessionPagesInsert).
 */
function valueRows(scope: SessionScope, value: FilterValue, alias: string): RawBuilder<SqlBool> {
  const under = valueKeysIn(scope, value, alias);
  if (!value.prefix) return under;
  const prior = sql.ref(`${alias}.prior_page_key`);
  return sql<SqlBool>`${under} AND (${prior} IS NULL OR NOT (${textMatch(prior, value.text, true)}))`;
}

/**
 * The rows `alias` under `value`, for a read of the range's: under a prefix whose page_keys the
 * request listed (SessionScope.pageKeys: those under the condition's values), its keys among them,
 * so that each one's range of starts is read, where a prefix's range of page_key is every row it
 * has, of every day. The keys are those of the moment the request was parsed; a key first written
 * since is a session derived since, which a statement may count or not, as any statement reads
 * the tables at its own moment.
 */
function valueKeysIn(scope: SessionScope, value: FilterValue, alias: string): RawBuilder<SqlBool> {
  if (!value.prefix || scope.pageKeys === undefined) return pageKeyUnder(alias, value);
  const keys = scope.pageKeys.filter((k) => keyUnder(k, value));
  if (keys.length === 0) return sql<SqlBool>`(1 = 0)`;
  return sql<SqlBool>`${sql.ref(`${alias}.page_key`)} IN (${sql.join(keys)})`;
}

/**
 * The conditions on session attributes of `rows` over the session_pages rows `alias`, whose
 * attribute columns are named and written as in `sessions` (sessionSelected, the one place that
 * turns conditions into SQL); null without such conditions.
 */
export function pageRowAttributes(
  scope: SessionScope,
  rows: PageRows,
  alias: string,
): RawBuilder<SqlBool> | null {
  return sessionSelected({ site: scope.site, filters: rows.attributes }, alias);
}

/**
 * What a statement over the sessions of `scope` reads, as `alias`: the sessions table, or the
 * session_pages rows of its condition (sessionPageRows), which then select the sessions in place of
 * the condition (`pages`: where.sessions leaves it out). Each such row has the sessions columns a
 * statement over the range's sessions reads (SESSION_PAGE_COPIES, started_at, site_id).
 */
export function sessionsSource(
  scope: SessionScope,
  alias: string,
): { from: string | AliasedRawBuilder<unknown, string>; raw: RawBuilder<unknown>; pages: boolean } {
  const pageRows = sessionPageRows(scope);
  if (pageRows === undefined) {
    return { from: `sessions as ${alias}`, raw: sql.raw(`sessions ${alias}`), pages: false };
  }
  const rows = sql`(SELECT * FROM ${sql.raw(`${SESSION_PAGES} ${alias}`)} WHERE ${sql.ref(`${alias}.site_id`)} = ${scope.site.id} AND ${pageRowsWhere(scope, pageRows, alias)})`;
  return { from: rows.as(alias), raw: sql`${rows} ${sql.raw(alias)}`, pages: true };
}
