import { RawBuilder, sql } from 'kysely';
import { Aggregate, pageviewMetrics, SCROLL_DEPTH_BUCKETS, scrollDepthCounts } from './metrics';

/**
 * What a derived session keeps of its pageviews' engagement (migration 1767800000000), in the
 * columns `hit_rollups` keeps it under: how many carry a time on page, their sum, and the
 * pageviews per scroll-depth bucket. Read as rollup rows (pageviewRollupMetrics,
 * scrollDepthRollupCounts), a session that holds all its pageviews in a range gives their time
 * on page and scroll depth without its hits.
 */
export const SESSION_ENGAGEMENT_COLUMNS = [
  'timed_pageviews',
  'time_on_page_seconds',
  ...SCROLL_DEPTH_BUCKETS.map((b) => b.column),
] as const;

const SECONDS_COLUMNS: ReadonlySet<string> = new Set(['duration_seconds', 'time_on_page_seconds']);

/**
 * Whether a column of a session (and of the rollups that sum it) is a sum of seconds: the
 * duration and the time on page, DECIMALs of three places (thousandths of a second on SQLite),
 * read and written as decimal text and summed exactly in thousandths, signed as they are. The
 * other sums are unsigned counts. Every reader and writer of SESSION_ENGAGEMENT_COLUMNS decides
 * by this alone.
 */
export const isSecondsSum = (column: string): boolean => SECONDS_COLUMNS.has(column);

/**
 * Those sums over pageview rows of `hits` (alias `h`), in SESSION_ENGAGEMENT_COLUMNS order: the
 * report's own definitions (pageviewMetrics, scrollDepthCounts), so a session's sums are what
 * the report would count of its pageviews.
 */
export function sessionEngagementSums(h = 'h'): Aggregate[] {
  const m = pageviewMetrics(h);
  return [m.timedPageviews, m.timeOnPageSum, ...scrollDepthCounts(h)];
}

/**
 * `SELECT site_id, session_id, <each SESSION_ENGAGEMENT_COLUMNS>` of the sessions with pageviews
 * among the hits `where` selects (over alias `p`, e.g. siteKeysWhere; `1 = 1` for all): what
 * `aggregate` writes into a derived session's row, and what the migration fills the rows with.
 */
export function sessionEngagementRows(where: RawBuilder<unknown>): RawBuilder<unknown> {
  const sums = sessionEngagementSums('p');
  return sql`SELECT p.site_id, p.session_id, ${sql.join(
    SESSION_ENGAGEMENT_COLUMNS.map((column, i) => sql`${sums[i]} AS ${sql.ref(column)}`),
  )}
    FROM hits p WHERE ${where} AND p.type = 'pageview'
    GROUP BY p.site_id, p.session_id`;
}
