import type { SessionAttribute } from '../definitions';
import { ROLLUP_DIMENSIONS } from './session-rollup';

/** A derived session's pageviews in one 15-minute UTC bucket (a session_pageview_buckets row). */
export interface SessionPageviewBucket {
  session_id: string;
  bucket: Date;
  pageviews: number;
}

/** One pageview_rollups row's change. */
export interface PageviewRollupDelta {
  dimension: SessionAttribute;
  bucket: Date;
  value: string;
  pageviews: number;
}

type SessionAttributes = { session_id: string } & Record<SessionAttribute, string>;

/**
 * What the pageview rollup holds for a set of sessions: each bucket's pageviews of a session
 * under each of its attributes (SPEC §1: broken down by a session attribute, a pageview takes
 * its session's). The old buckets under the old attributes subtracted, the new under the new
 * added, netted per row; zero changes left out. A bucket row of a session without attributes
 * (no derived row) counts nowhere.
 */
export function pageviewRollupDeltas(
  before: { buckets: readonly SessionPageviewBucket[]; sessions: readonly SessionAttributes[] },
  after: { buckets: readonly SessionPageviewBucket[]; sessions: readonly SessionAttributes[] },
): PageviewRollupDelta[] {
  const deltas = new Map<string, PageviewRollupDelta>();
  const add = (state: typeof before, sign: 1 | -1) => {
    const sessions = new Map(state.sessions.map((s) => [s.session_id, s]));
    for (const b of state.buckets) {
      const session = sessions.get(b.session_id);
      if (!session) continue;
      for (const dimension of ROLLUP_DIMENSIONS) {
        const value = session[dimension];
        const key = `${dimension}\u0000${b.bucket.getTime()}\u0000${value}`;
        const d = deltas.get(key) ?? { dimension, bucket: b.bucket, value, pageviews: 0 };
        d.pageviews += sign * b.pageviews;
        deltas.set(key, d);
      }
    }
  };
  add(before, -1);
  add(after, 1);
  return [...deltas.values()].filter((d) => d.pageviews !== 0);
}
