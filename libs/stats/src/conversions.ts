import { hitMatchSql } from './definitions';
import type { SqlFragment } from './sql/local-time';

export interface GoalDefinition {
  id: number;
  type: 'event' | 'path';
  /** An event name, or a path pattern whose trailing `*` matches a prefix. */
  matchValue: string;
}

/** SQL condition: hit `alias` matches the goal (SPEC §1 "Goal match"). */
export function goalMatchSql(alias: string, goal: GoalDefinition): SqlFragment {
  return goal.type === 'event'
    ? hitMatchSql(alias, { type: 'event', name: goal.matchValue })
    : hitMatchSql(alias, { type: 'path', path: goal.matchValue });
}

/**
 * SQL condition: the session `sessionAlias` (a sessions row) converted at least one of
 * `goals` (SPEC §1 "Conversion"). With no goals no session converts. The single definition
 * behind conversions, conversion rates and the breakdown's conv_rate.
 */
export function sessionConvertedSql(sessionAlias: string, goals: GoalDefinition[]): SqlFragment {
  if (goals.length === 0) return { sql: '(1 = 0)', params: [] };
  const matches = goals.map((g) => goalMatchSql('gh', g));
  return {
    sql:
      `EXISTS (SELECT 1 FROM hits gh WHERE gh.site_id = ${sessionAlias}.site_id AND gh.session_id = ${sessionAlias}.session_id ` +
      `AND (${matches.map((m) => m.sql).join(' OR ')}))`,
    params: matches.flatMap((m) => m.params),
  };
}

/**
 * The same definition as sessionConvertedSql, set-based for reports that need every goal at
 * once: a derived table with one row per session of `sessions cs` matching `where` that
 * converted at least one goal, and a 1/0 column `goal_<i>` per goal. One pass over those
 * sessions' matching hits instead of one lookup per session and goal. Join it on session_id;
 * a session without a row converted nothing.
 */
export function convertedSessionsTableSql(goals: GoalDefinition[], where: SqlFragment): SqlFragment {
  if (goals.length === 0) {
    return { sql: 'SELECT NULL AS session_id FROM (SELECT 1) none WHERE 1 = 0', params: [] };
  }
  const matches = goals.map((g) => goalMatchSql('gh', g));
  return {
    sql:
      `SELECT gh.session_id, ${matches.map((m, i) => `MAX(${m.sql}) AS goal_${i}`).join(', ')} ` +
      'FROM sessions cs JOIN hits gh ON gh.site_id = cs.site_id AND gh.session_id = cs.session_id ' +
      `WHERE ${where.sql} AND (${matches.map((m) => m.sql).join(' OR ')}) GROUP BY gh.session_id`,
    params: [...matches.flatMap((m) => m.params), ...where.params, ...matches.flatMap((m) => m.params)],
  };
}
