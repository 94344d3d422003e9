import { sql, SqlBool, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import { SESSION_ATTRIBUTES, STEP_KEY_CHARS } from '../definitions';
import type { SessionScope, StatsFilter } from './session-filter';
import { siteKeysWhere } from './site-keys';
import { SESSION_ENGAGEMENT_COLUMNS } from './session-engagement';

/**
 * `session_pages` (migration 1768700000000): each derived session once for every path it has a
 * pageview of, keyed (site, page_key, started_at, session_id) with the columns `aggregate`
 * derives for it (SESSION_PAGE_COLUMNS, as the sessions table holds them). `page_key` is the
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

/** The sessions columns a session's rows in session_pages repeat beside their key's site_id and started_at. */
export const SESSION_PAGE_COLUMNS = DERIVED_SESSION_COLUMNS.filter(
  (c) => c !== 'site_id' && c !== 'started_at',
);

/**
 * How many queued sessions of a site a request reads the hits of, at most, to tell whether
 * session_pages is current for its path (StatsRepository.pageRowsCurrent): each costs a few
 * index entries; a backlog past it leaves the request to test the hits.
 */
export const PAGE_CHECK_QUEUE = 20_000;

/** session_pages by session: what `aggregate` deletes before it writes a re-derived session's rows. */
export const SESSION_PAGES_BY_SESSION = 'ix_session_pages_session';

/**
 * `INSERT INTO session_pages … SELECT`: the rows of the sessions whose pageviews `where` selects
 * among `hits h` (siteKeysWhere for a chunk of `aggregate`; every pageview for the migration),
 * from their rows in `sessions`, one per distinct page_key. A session without pageviews has
 * none (it fails every `page==` condition).
 */
export function sessionPagesInsert(where: RawBuilder<SqlBool>): RawBuilder<unknown> {
  const copied = SESSION_PAGE_COLUMNS.map((c) => sql.ref(`s.${c}`));
  return sql`INSERT INTO ${sql.raw(SESSION_PAGES)} (site_id, page_key, started_at, ${sql.raw(SESSION_PAGE_COLUMNS.join(', '))})
    SELECT s.site_id, p.page_key, s.started_at, ${sql.join(copied)}
    FROM (SELECT DISTINCT h.site_id, h.session_id, h.step_key AS page_key FROM hits h WHERE ${where} AND h.type = 'pageview') p
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

/** A whole path that its page_key tells apart: shorter than page_key (STEP_KEY_CHARS characters). */
function wholeKey(value: { text: string; prefix: boolean }): boolean {
  // A longer path shares its page_key with every path of the same first STEP_KEY_CHARS characters.
  return !value.prefix && Array.from(value.text).length < STEP_KEY_CHARS;
}

/**
 * The path of the one condition a request may read session_pages for, `page==` one whole path
 * shorter than page_key, or undefined.
 */
export function pageOfCondition(filters: readonly StatsFilter[]): string | undefined {
  if (filters.length !== 1) return undefined;
  const [f] = filters;
  if (f.dimension !== 'page' || f.operator !== '==' || f.values.length !== 1) return undefined;
  const [value] = f.values;
  return wholeKey(value) ? value.text : undefined;
}

/**
 * The session_pages rows that are the sessions a request's one condition selects, read in place
 * of a test of each of the range's sessions (sessionsSource):
 *
 * - `page==` one whole path: its rows (pageOfCondition).
 * - `entry_page==` / `exit_page==` one whole path: the rows under it whose session entered (left)
 *   by it, `endpoint` = page_key. A session's entry and exit paths are paths of its pageviews, so
 *   its rows, written with its row in `sessions` from the same hits, hold one under each, with
 *   the same entry and exit paths as that row: those rows select exactly the sessions whose row
 *   the condition selects, queued or not.
 *
 * One path only: at 1M pageviews, `entry_page==/|/pricing` read 212k rows for the 120k sessions
 * it selects among 301k, and engagement and breakdown pageviews were slower than testing each
 * session; a prefix would read the paths' rows of every day the site has, not the range's.
 */
export interface PageRows {
  readonly path: string;
  readonly endpoint?: 'entry_path' | 'exit_path';
}

/** PageRows for `filters`, or undefined (currency aside: sessionPageRows). */
export function pageRowsOfCondition(filters: readonly StatsFilter[]): PageRows | undefined {
  const path = pageOfCondition(filters);
  if (path !== undefined) return { path };
  if (filters.length !== 1) return undefined;
  const [f] = filters;
  if (f.dimension !== 'entry_page' && f.dimension !== 'exit_page') return undefined;
  if (f.operator !== '==' || f.values.length !== 1 || !wholeKey(f.values[0])) return undefined;
  return { path: f.values[0].text, endpoint: f.dimension === 'entry_page' ? 'entry_path' : 'exit_path' };
}

/**
 * The path whose session_pages rows are the sessions `scope` selects, or undefined: its one
 * condition is `page==` one whole path (pageOfCondition), it is not the raw path, and those rows
 * were current as the request was parsed (`pageRowsCurrent`: no queued session had gained a
 * pageview of the path since it was last derived; StatsRepository.pageRowsCurrent). A session
 * then has a row under the path exactly when one of its hits is a pageview of it, which is what
 * the raw condition tests, and the row holds what its row in `sessions` holds.
 */
export function sessionPagesPath(scope: SessionScope): string | undefined {
  const rows = sessionPageRows(scope);
  return rows?.endpoint === undefined ? rows?.path : undefined;
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

/** The rows of `rows` among the session_pages rows `alias` of a site: their page_key, and their endpoint's. */
function pageRowsWhere(rows: PageRows, alias: string): RawBuilder<SqlBool> {
  const key = sql.ref(`${alias}.page_key`);
  const under = sql<SqlBool>`${key} = ${rows.path}`;
  return rows.endpoint === undefined
    ? under
    : sql<SqlBool>`${under} AND ${sql.ref(`${alias}.${rows.endpoint}`)} = ${key}`;
}

/**
 * What a statement over the sessions of `scope` reads, as `alias`: the sessions table, or the
 * session_pages rows of its condition (sessionPageRows), which then select the sessions in place of
 * the condition (`pages`: where.sessions leaves it out). Each such row has the sessions columns a
 * statement over the range's sessions reads (SESSION_PAGE_COLUMNS, started_at, site_id).
 *
 * `endpoints: false`: the sessions table under an entry or exit page condition too, for a statement
 * that reads more of each session than session_pages keeps (its test there is of the row alone).
 */
export function sessionsSource(
  scope: SessionScope,
  alias: string,
  options: { endpoints?: boolean } = {},
): { from: string | AliasedRawBuilder<unknown, string>; raw: RawBuilder<unknown>; pages: boolean } {
  const pageRows = sessionPageRows(scope);
  if (pageRows === undefined || (pageRows.endpoint !== undefined && options.endpoints === false)) {
    return { from: `sessions as ${alias}`, raw: sql.raw(`sessions ${alias}`), pages: false };
  }
  const rows = sql`(SELECT * FROM ${sql.raw(`${SESSION_PAGES} ${alias}`)} WHERE ${sql.ref(`${alias}.site_id`)} = ${scope.site.id} AND ${pageRowsWhere(pageRows, alias)})`;
  return { from: rows.as(alias), raw: sql`${rows} ${sql.raw(alias)}`, pages: true };
}
