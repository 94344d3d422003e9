/**
 * The metric definitions of SPEC §1, in one place. The aggregator derives sessions with
 * these; report queries reuse the same fragments, so "what is a bounce" exists once.
 */
import type { SqlDialect } from '@app/db';
import { Expression, RawBuilder, sql, SqlBool } from 'kysely';
import { col } from './sql/col';

/** The hit types of SPEC §1. `hits.type` is NOT NULL and one of them. */
export const HIT_TYPES = ['pageview', 'event', 'purchase'] as const;
export type HitType = (typeof HIT_TYPES)[number];

/** Session attributes taken from the session's first hit. */
export const SESSION_ATTRIBUTES = ['channel', 'source', 'country', 'device', 'browser'] as const;
export type SessionAttribute = (typeof SESSION_ATTRIBUTES)[number];

/** Whether a dimension (a filter's, a breakdown's) is one of the session attributes. */
export const isSessionAttribute = (name: string): name is SessionAttribute =>
  (SESSION_ATTRIBUTES as readonly string[]).includes(name);

/** What a missing attribute reads as: `(direct)` for a missing source, `(unknown)` otherwise. */
export const MISSING_ATTRIBUTE: Record<SessionAttribute, string> = {
  channel: '(unknown)',
  source: '(direct)',
  country: '(unknown)',
  device: '(unknown)',
  browser: '(unknown)',
};

/** Hit order within a session or visitor: by timestamp, ties by import order. */
export const HIT_ORDER = ['ts', 'seq'] as const;

/**
 * The indexes of `hits` that list a session's or a visitor's hits in HIT_ORDER: (site_id,
 * session_id, ts, seq) and (site_id, visitor_id, ts), to which InnoDB appends the primary key seq.
 */
export const HITS_BY_SESSION = 'ix_hits_site_session';
/** The sessions of a visitor in order of their start. */
export const SESSIONS_BY_VISITOR = 'ix_sessions_site_visitor';
/** Repeat sessions (a visitor's later ones, is_repeat) by site and combination of attributes (migration 1768300000000). */
export const SESSIONS_BY_REPEAT = 'ix_sessions_site_repeat';
/**
 * session_attribute_day_rollups by site, combination and day (migration 1767700000000), until
 * migration 1768500000000 made that order the table's primary key.
 */
export const ATTRIBUTE_DAYS_BY_COMBINATION = 'ix_session_attribute_days_combination';
/** session_attribute_day_rollups by site and day (migration 1768500000000). */
export const ATTRIBUTE_DAYS_BY_DAY = 'ix_session_attribute_days_bucket';
/** visitor_combination_sketches by site and day (migration 1768500000000): a day's, rebuilt by `aggregate`. */
export const COMBINATION_SKETCHES_BY_DAY = 'ix_visitor_combination_sketches_bucket';
/**
 * The unfiltered session and entry/exit page rollups by site, list and day (or span and block),
 * then sessions (migration 1768600000000): a day's or a block's values with the most sessions
 * first, which the overview's unfiltered lists read the top rows of (overviewStatements.partTopRows).
 */
export const TOP_ROWS_INDEXES = {
  session_day_rollups: {
    name: 'ix_session_days_top',
    columns: ['site_id', 'dimension', 'bucket', 'sessions'],
  },
  session_span_rollups: {
    name: 'ix_session_spans_top',
    columns: ['site_id', 'dimension', 'span', 'bucket', 'sessions'],
  },
  session_path_day_rollups: {
    name: 'ix_session_path_days_top',
    columns: ['site_id', 'dimension', 'bucket', 'sessions'],
  },
  session_path_span_rollups: {
    name: 'ix_session_path_spans_top',
    columns: ['site_id', 'dimension', 'span', 'bucket', 'sessions'],
  },
} as const;
export const HITS_BY_VISITOR = 'ix_hits_site_visitor';
/**
 * A site's hits by type and time: realtime's newest pageviews and events and the raw edges of
 * its 30-minute count (where.liveHits, where.hitsStamped); `hits` has no (site_id, ts) index
 * (migration 1767000000000), and realtime's all-types window reads `live_hits`.
 */
export const HITS_BY_TYPE_TIME = 'ix_hits_site_type_ts';

/** HIT_ORDER as an ORDER BY list over table alias `alias`, oldest first or newest first. */
export function hitOrderSql(alias: string, direction: 'asc' | 'desc' = 'asc'): string {
  return HIT_ORDER.map((c) => `${alias}.${c}${direction === 'desc' ? ' DESC' : ''}`).join(', ');
}

/**
 * Bounce: a session with exactly one hit, and that hit a pageview. Stored as sessions.is_bounce
 * by the aggregator; `alias` qualifies the hits/pageviews counts it is computed from.
 */
export const isBounceSql = (alias: string) => `(${alias}.hits = 1 AND ${alias}.pageviews = 1)`;

/** A rate in percent, 0 when the denominator is 0, rounded to 2 decimals (SPEC §3). */
export function rate(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : round2((numerator / denominator) * 100);
}

/** Averages, durations and money are rounded to 2 decimals. */
export function round2(value: number): number {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

/** A mean rounded to 2 decimals; 0 over nothing. `sum` may be a DECIMAL string from the driver. */
export function average(sum: number | string, count: number): number {
  return count === 0 ? 0 : round2(Number(sum) / count);
}

/** % change from `previous` to `current`, 2 decimals; `null` when there is nothing to compare with. */
export function percentChange(current: number, previous: number): number | null {
  return previous === 0 ? null : round2(((current - previous) / previous) * 100);
}

export type HitMatch = { type: 'event'; name: string } | { type: 'pageview' | 'path'; path: string };

/**
 * SQL condition: `column` equals `text`, or with `prefix` starts with it. Compared as stored
 * (binary collation), by characters, never through LIKE: no character of `text` is a wildcard.
 */
export function textMatch(column: Expression<unknown>, text: string, prefix: boolean): RawBuilder<SqlBool> {
  if (!prefix) return sql<SqlBool>`${column} = ${text}`;
  if (text === '') return sql<SqlBool>`${column} IS NOT NULL`;
  return sql<SqlBool>`SUBSTRING(${column}, 1, ${Array.from(text).length}) = ${text}`;
}

/**
 * hits.step_key (migration 1765000000000): the event's name, or the pageview's path cut to
 * this many characters; indexed as (site_id, type, step_key, visitor_id, ts, seq, session_id).
 */
export const STEP_KEY_CHARS = 255;
export const HITS_BY_STEP = 'ix_hits_site_step';

/** The code point after `c`, skipping the surrogates; undefined after the last one. */
function nextCodePoint(c: string): string | undefined {
  const code = c.codePointAt(0) as number;
  if (code >= 0x10ffff) return undefined;
  return String.fromCodePoint(code === 0xd7ff ? 0xe000 : code + 1);
}

/**
 * SQL: `column` (a binary-collated text) in the range of the strings that start with `prefix`,
 * so that an index on it reads only them: [prefix, prefix with its last character moved one
 * code point up). A superset test for the index, never the definition: textMatch stays beside it.
 */
function prefixRange(column: Expression<unknown>, prefix: string): RawBuilder<SqlBool> {
  const chars = Array.from(prefix);
  const next = nextCodePoint(chars[chars.length - 1]);
  if (next === undefined) return sql<SqlBool>`${column} >= ${prefix}`;
  const upper = chars.slice(0, -1).join('') + next;
  return sql<SqlBool>`${column} >= ${prefix} AND ${column} < ${upper}`;
}

/**
 * SQL condition on hits aliased `alias`: a pageview whose path matches `pattern` (equal, or
 * a prefix when it ends in `*`), written over step_key so that HITS_BY_STEP reads only the hits
 * that can match. step_key is the path cut to STEP_KEY_CHARS characters, so a pattern that fits
 * in it is decided by step_key alone (index only); a longer one narrows by its first
 * STEP_KEY_CHARS characters and compares the whole path.
 */
function pageviewPathMatch(alias: string, pattern: string): RawBuilder<SqlBool> {
  const prefix = pattern.endsWith('*');
  return pageviewPathIs(alias, prefix ? pattern.slice(0, -1) : pattern, prefix);
}

/**
 * The same over hits aliased `alias` with the prefix said apart (a `page` filter's value, whose
 * trailing `*` may be a literal one): the path equals `text`, or starts with it when `prefix`.
 * Not a test of the hit's type.
 */
export function pageviewPathIs(alias: string, text: string, prefix: boolean): RawBuilder<SqlBool> {
  const key = col(alias, 'step_key');
  const byKey = pathKeyIs(key, text, prefix);
  if (byKey !== undefined) return byKey;
  const head = Array.from(text).slice(0, STEP_KEY_CHARS).join('');
  return sql<SqlBool>`${key} = ${head} AND ${textMatch(col(alias, 'path'), text, prefix)}`;
}

/** pageviewPathIs for any of `values` (a `page` condition's), in parentheses. */
export function pageviewPathIsAny(
  alias: string,
  values: readonly { text: string; prefix: boolean }[],
): RawBuilder<SqlBool> {
  // Each is a chain of ANDs, which binds tighter than OR.
  return sql<SqlBool>`(${sql.join(
    values.map((v) => pageviewPathIs(alias, v.text, v.prefix)),
    sql` OR `,
  )})`;
}

/**
 * SQL over `key`, a path cut to STEP_KEY_CHARS characters (hits.step_key, session_pages.page_key):
 * the path equals `text`, or starts with it when `prefix`, where the key alone tells (a whole
 * path shorter than the key, a prefix no longer than it), with the key's range beside a prefix
 * test so that an index on it reads only what can match; undefined where it cannot tell.
 */
export function pathKeyIs(
  key: Expression<unknown>,
  text: string,
  prefix: boolean,
): RawBuilder<SqlBool> | undefined {
  const chars = Array.from(text);
  if (prefix && chars.length === 0) return sql<SqlBool>`${key} IS NOT NULL`;
  if (chars.length < STEP_KEY_CHARS || (prefix && chars.length === STEP_KEY_CHARS)) {
    return prefix
      ? sql<SqlBool>`${prefixRange(key, text)} AND ${textMatch(key, text, true)}`
      : textMatch(key, text, false);
  }
  return undefined;
}

/**
 * SQL condition matching a goal or funnel step against hits aliased `alias`: an event name
 * matches event hits of that name; a path matches pageviews whose path equals it, or starts
 * with the prefix when the pattern ends in `*`. Written over hits.step_key (the name of an
 * event, the path of a pageview) so that HITS_BY_STEP serves it.
 */
export function hitMatch(alias: string, match: HitMatch): RawBuilder<SqlBool> {
  if (match.type === 'event') {
    return sql<SqlBool>`(${col(alias, 'type')} = 'event' AND ${col(alias, 'step_key')} = ${match.name})`;
  }
  return sql<SqlBool>`(${col(alias, 'type')} = 'pageview' AND ${pageviewPathMatch(alias, match.path)})`;
}

/** A session attribute as reports read it: the first hit's value, or what a missing one reads as. */
export function attributeOrMissing(
  attribute: SessionAttribute,
  firstHitValue: Expression<unknown>,
): RawBuilder<string> {
  return sql<string>`COALESCE(${firstHitValue}, ${sql.lit(MISSING_ATTRIBUTE[attribute])})`;
}

/**
 * SQL: `column` of the first hit (hit order) of the session that hit alias `hit` belongs to,
 * read from the raw hits, for reports that cannot wait for the aggregator (realtime).
 */
export function firstHitOfSession(dialect: SqlDialect, column: string, hit: string): RawBuilder<unknown> {
  return sql`(SELECT ${sql.ref(`f.${column}`)} FROM ${sql.raw(dialect.tableWithIndex('hits', 'f', HITS_BY_SESSION))} WHERE f.site_id = ${col(hit, 'site_id')} AND f.session_id = ${col(hit, 'session_id')} ORDER BY ${sql.raw(hitOrderSql('f'))} LIMIT 1)`;
}
