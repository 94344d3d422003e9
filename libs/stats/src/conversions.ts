import { tableWithIndexMarker } from '@app/db/dialect';
import { RawBuilder, sql, SqlBool } from 'kysely';
import { hitMatch, HITS_BY_SESSION, HITS_BY_STEP } from './definitions';
import { col } from './sql/col';

export interface GoalDefinition {
  id: number;
  type: 'event' | 'path';
  /** An event name, or a path pattern whose trailing `*` matches a prefix. */
  matchValue: string;
}

/** SQL condition: hit `alias` matches the goal (SPEC §1 "Goal match"). */
export function goalMatch(alias: string, goal: GoalDefinition): RawBuilder<SqlBool> {
  return goal.type === 'event'
    ? hitMatch(alias, { type: 'event', name: goal.matchValue })
    : hitMatch(alias, { type: 'path', path: goal.matchValue });
}

/**
 * `hits alias` looked up by session through its (site_id, session_id, ts, seq) index. Named,
 * because with statistics taken while hits was small MariaDB chose (site_id, ts) and read every
 * hit of the site for each session (a bench smoke run stuck for minutes on conv_rate).
 */
export const hitsOfSession = (alias: string) => sql.raw(tableWithIndexMarker('hits', alias, HITS_BY_SESSION));

/** SQL condition: hit `alias` matches at least one of `goals` (goalMatch). */
export const anyGoal = (alias: string, goals: readonly GoalDefinition[]) =>
  sql<SqlBool>`(${sql.join(
    goals.map((g) => goalMatch(alias, g)),
    sql` OR `,
  )})`;

/**
 * SQL condition: the session `sessionAlias` (a sessions row) converted at least one of
 * `goals` (SPEC §1 "Conversion"), one session at a time (the conversion tail's sessions). With
 * no goals no session converts. Conversions and the breakdown's conv_rate read the same match
 * (goalMatch) set-based, through convertedSessionsTable, and the `goal` filter as the set of
 * sessions with a matching hit (sessionSelected).
 */
export function sessionConverted(
  sessionAlias: string,
  goals: GoalDefinition[],
  since?: Date,
): RawBuilder<SqlBool> {
  if (goals.length === 0) return sql<SqlBool>`(1 = 0)`;
  const stamped = since === undefined ? sql`` : sql` AND gh.ts >= ${since}`;
  return sql<SqlBool>`EXISTS (SELECT 1 FROM ${hitsOfSession('gh')} WHERE gh.site_id = ${col(sessionAlias, 'site_id')} AND gh.session_id = ${col(sessionAlias, 'session_id')}${stamped} AND ${anyGoal('gh', goals)})`;
}

/**
 * The goals of `goals` each of these sessions converted, from all their hits (the same match
 * as sessionConverted): a row `(session_id, goal_0, …)` with a 1/0 column per goal for each
 * session with a matching hit. `aggregate` keeps session_goals with it.
 */
export function goalsOfSessions(
  goals: GoalDefinition[],
  siteId: number,
  sessionIds: readonly string[],
): RawBuilder<{ session_id: string } & Record<string, number | string>> {
  const perGoal = goals.map((g, i) => sql`MAX(${goalMatch('gh', g)}) AS ${sql.ref(`goal_${i}`)}`);
  return sql`SELECT gh.session_id, ${sql.join(perGoal)} FROM ${hitsOfSession('gh')} WHERE gh.site_id = ${siteId} AND gh.session_id IN (${sql.join(sessionIds)}) AND ${anyGoal('gh', goals)} GROUP BY gh.session_id`;
}

/**
 * The same definition as sessionConverted, set-based, for reports that need it for every
 * session of a range at once: a derived table with one row per session that has a hit matching
 * at least one of `goals`, and a 1/0 column `goal_<i>` per goal. Read from the goal-matching
 * hits alone, through their index (site, type, step_key, …, session_id: index only), not from
 * every hit of every session. Only hits stamped at or after the range start are read: every hit
 * of a session that started in the range is (a session starts with its first hit), so joined on
 * session_id to the range's sessions it is exact for every aggregated session. A session
 * without a row converted nothing.
 */
export function convertedSessionsTable(
  goals: GoalDefinition[],
  query: { site: { id: number }; range: { startUtc: Date } },
): RawBuilder<unknown> {
  if (goals.length === 0) {
    return sql`SELECT NULL AS session_id FROM (SELECT 1) none WHERE 1 = 0`;
  }
  const perGoal = goals.map((g, i) => sql`MAX(${goalMatch('gh', g)}) AS ${sql.ref(`goal_${i}`)}`);
  return sql`SELECT gh.session_id, ${sql.join(perGoal)} FROM ${sql.raw(tableWithIndexMarker('hits', 'gh', HITS_BY_STEP))} WHERE gh.site_id = ${query.site.id} AND gh.ts >= ${query.range.startUtc} AND ${anyGoal('gh', goals)} GROUP BY gh.session_id`;
}
