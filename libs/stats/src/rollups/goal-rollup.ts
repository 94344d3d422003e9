import type { SqlDialect } from '@app/db/dialect';
import type { SessionAttribute } from '../definitions';
import type { Queryable } from './day-refill';
import { attributeKey, attributeKeySqlOf, ROLLUP_DIMENSIONS, rollupBucket } from './session-rollup';

/** A derived session as the conversion rollups see it: its start, attributes and converted goals. */
export type GoalSession = { session_id: string; started_at: Date } & Record<SessionAttribute, string> & {
    /** The ids of the goals it converted (SPEC §1 "Conversion"), among the rolled-up ones. */
    goals: readonly number[];
  };

/** One goal_rollups row's change: sessions that converted the goal, by bucket of their start. */
export interface GoalRollupDelta {
  goalId: number;
  bucket: Date;
  sessions: number;
}

/** One converted_rollups row's change: sessions that converted any goal, by bucket and attribute. */
export interface ConvertedRollupDelta {
  dimension: SessionAttribute;
  bucket: Date;
  value: string;
  sessions: number;
}

/**
 * The goal id under which goal_attribute_rollups counts the sessions that converted any goal
 * (goal ids start at 1).
 */
export const ANY_GOAL = 0;

/**
 * One goal_attribute_rollups row's change: sessions that converted the goal (ANY_GOAL: any),
 * by bucket of their start and combination of the five attributes.
 */
export type GoalAttributeRollupDelta = {
  goalId: number;
  bucket: Date;
  key: string;
  sessions: number;
} & Record<SessionAttribute, string>;

/**
 * What re-deriving sessions changes in the conversion rollups: each old session (its old start,
 * attributes and goals) subtracted, each new one added, netted per row; rows whose change is
 * zero are left out. A session that converted nothing is in no row.
 */
export function conversionRollupDeltas(
  before: readonly GoalSession[],
  after: readonly GoalSession[],
): { goals: GoalRollupDelta[]; converted: ConvertedRollupDelta[]; attributes: GoalAttributeRollupDelta[] } {
  const goals = new Map<string, GoalRollupDelta>();
  const converted = new Map<string, ConvertedRollupDelta>();
  const attributes = new Map<string, GoalAttributeRollupDelta>();
  const add = (s: GoalSession, sign: 1 | -1) => {
    if (s.goals.length === 0) return;
    const bucket = rollupBucket(new Date(s.started_at));
    for (const goalId of new Set(s.goals)) {
      const key = `${goalId}\u0000${bucket.getTime()}`;
      const d = goals.get(key) ?? { goalId, bucket, sessions: 0 };
      d.sessions += sign;
      goals.set(key, d);
    }
    const values = Object.fromEntries(ROLLUP_DIMENSIONS.map((d) => [d, s[d]])) as Record<
      SessionAttribute,
      string
    >;
    const combination = attributeKey(ROLLUP_DIMENSIONS.map((d) => s[d]));
    for (const goalId of [ANY_GOAL, ...new Set(s.goals)]) {
      const key = `${goalId}\u0000${bucket.getTime()}\u0000${combination}`;
      const d = attributes.get(key) ?? { goalId, bucket, key: combination, ...values, sessions: 0 };
      d.sessions += sign;
      attributes.set(key, d);
    }
    for (const dimension of ROLLUP_DIMENSIONS) {
      const value = s[dimension];
      const key = `${dimension}\u0000${bucket.getTime()}\u0000${value}`;
      const d = converted.get(key) ?? { dimension, bucket, value, sessions: 0 };
      d.sessions += sign;
      converted.set(key, d);
    }
  };
  before.forEach((s) => add(s, -1));
  after.forEach((s) => add(s, 1));
  return {
    goals: [...goals.values()].filter((d) => d.sessions !== 0),
    converted: [...converted.values()].filter((d) => d.sessions !== 0),
    attributes: [...attributes.values()].filter((d) => d.sessions !== 0),
  };
}

/**
 * goal_attribute_rollups of every site, or of one, from the stored goals (session_goals) and
 * the sessions, as conversionRollupDeltas adds them: each stored goal's session under its goal,
 * and each converted session once under ANY_GOAL. The table (or the site's rows) must be empty;
 * the day rows follow with refillDayRollups (GOAL_ATTRIBUTE_DAY_ROLLUP).
 */
export async function fillGoalAttributeRollups(q: Queryable, d: SqlDialect, siteId?: number): Promise<void> {
  const site = siteId === undefined ? '' : 'WHERE site_id = ?';
  const bucket = d.floorToQuarterHour('s.started_at');
  const attributes = ROLLUP_DIMENSIONS.map((a) => `s.${a}`).join(', ');
  await q.query(
    `INSERT INTO goal_attribute_rollups (site_id, goal_id, bucket, attributes_hash, ${ROLLUP_DIMENSIONS.join(', ')}, sessions)
     SELECT s.site_id, g.goal_id, ${bucket}, ${d.md5Bytes(attributeKeySqlOf(d, 's'))}, ${attributes}, COUNT(*)
     FROM (
       SELECT site_id, session_id, goal_id FROM session_goals ${site}
       UNION ALL
       SELECT DISTINCT site_id, session_id, ${ANY_GOAL} FROM session_goals ${site}
     ) g JOIN sessions s ON s.site_id = g.site_id AND s.session_id = g.session_id
     GROUP BY s.site_id, g.goal_id, ${bucket}, ${attributes}`,
    siteId === undefined ? [] : [siteId, siteId],
  );
}
