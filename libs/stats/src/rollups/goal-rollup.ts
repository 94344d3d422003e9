import type { SessionAttribute } from '../definitions';
import { ROLLUP_DIMENSIONS, rollupBucket } from './session-rollup';

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
 * What re-deriving sessions changes in the conversion rollups: each old session (its old start,
 * attributes and goals) subtracted, each new one added, netted per row; rows whose change is
 * zero are left out. A session that converted nothing is in no row.
 */
export function conversionRollupDeltas(
  before: readonly GoalSession[],
  after: readonly GoalSession[],
): { goals: GoalRollupDelta[]; converted: ConvertedRollupDelta[] } {
  const goals = new Map<string, GoalRollupDelta>();
  const converted = new Map<string, ConvertedRollupDelta>();
  const add = (s: GoalSession, sign: 1 | -1) => {
    if (s.goals.length === 0) return;
    const bucket = rollupBucket(new Date(s.started_at));
    for (const goalId of new Set(s.goals)) {
      const key = `${goalId}\u0000${bucket.getTime()}`;
      const d = goals.get(key) ?? { goalId, bucket, sessions: 0 };
      d.sessions += sign;
      goals.set(key, d);
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
  };
}
