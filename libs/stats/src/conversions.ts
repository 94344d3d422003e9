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
