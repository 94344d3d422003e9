/**
 * The metric definitions of SPEC §1, in one place. The aggregator derives sessions with
 * these; report queries reuse the same fragments, so "what is a bounce" exists once.
 */

/** Session attributes taken from the session's first hit. */
export const SESSION_ATTRIBUTES = ['channel', 'source', 'country', 'device', 'browser'] as const;
export type SessionAttribute = (typeof SESSION_ATTRIBUTES)[number];

/** What a missing attribute reads as: `(direct)` for a missing source, `(unknown)` otherwise. */
export const MISSING_ATTRIBUTE: Record<SessionAttribute, string> = {
  channel: '(unknown)',
  source: '(direct)',
  country: '(unknown)',
  device: '(unknown)',
  browser: '(unknown)',
};

/** Hit order within a session or visitor: by timestamp, ties by import order. */
export const HIT_ORDER = 'ts, seq';

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

/**
 * SQL condition matching a goal or funnel step against hits aliased `alias`: an event name
 * matches event hits of that name; a path matches pageviews whose path equals it, or starts
 * with the prefix when the pattern ends in `*`. Returns the fragment and its parameters.
 */
export function hitMatchSql(
  alias: string,
  match: { type: 'event'; name: string } | { type: 'pageview' | 'path'; path: string },
): { sql: string; params: unknown[] } {
  if (match.type === 'event')
    return { sql: `(${alias}.type = 'event' AND ${alias}.name = ?)`, params: [match.name] };
  if (match.path.endsWith('*')) {
    const prefix = match.path.slice(0, -1);
    return {
      sql: `(${alias}.type = 'pageview' AND SUBSTRING(${alias}.path, 1, ?) = ?)`,
      params: [Array.from(prefix).length, prefix],
    };
  }
  return { sql: `(${alias}.type = 'pageview' AND ${alias}.path = ?)`, params: [match.path] };
}
