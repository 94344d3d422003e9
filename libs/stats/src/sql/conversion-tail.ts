import { RawBuilder, sql } from 'kysely';
import { GoalDefinition, sessionConverted } from '../conversions';
import { SESSION_ATTRIBUTES } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { storedGoalExists } from './session-filter';
import { flag } from './stored-conversions';
import { where } from './where';
/**
 * The not-yet-aggregated tail of the conversion rollups, which hold each derived session with
 * the goals it converted when it was last derived (session_goals). For each session of the
 * query's range queued in dirty_sessions (as its row stands): a row `(started_at, channel, …,
 * browser, converted, goal_0, …)` (the goal columns unless `perGoal` is false) with the change, -1, 0 or 1, from what the rollups count for
 * it to what the raw path counts now (convertedSessionsTable: its hits stamped at or after the
 * range start). Added to the rollups' sums, it gives the raw path's counts.
 */
export function conversionTail(
  query: StatsQuery,
  goals: GoalDefinition[],
  options: { perGoal: boolean } = { perGoal: true },
): RawBuilder<unknown> {
  const stored = (goal?: GoalDefinition) =>
    storedGoalExists('s', goal === undefined ? {} : { goalIds: [goal.id] });
  const since = query.range.startUtc;
  return sql`SELECT s.started_at, ${sql.join(SESSION_ATTRIBUTES.map((a) => sql.ref(`s.${a}`)))},
      ${flag(sessionConverted('s', goals, since))} - ${flag(stored())} AS converted${sql.join(
        (options.perGoal ? goals : []).map(
          (g, i) =>
            sql`, ${flag(sessionConverted('s', [g], since))} - ${flag(stored(g))} AS ${sql.ref(`goal_${i}`)}`,
        ),
        sql``,
      )}
    FROM dirty_sessions q JOIN sessions s ON s.site_id = q.site_id AND s.session_id = q.session_id
    WHERE q.site_id = ${query.site.id} AND ${where.queuedSessions(query, 's')}`;
}
