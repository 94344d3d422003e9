import type { SessionAttribute } from '../definitions';
import { ROLLUP_DIMENSIONS } from './session-rollup';

/**
 * Rows stamped with their own ts (pageviews, orders) broken down by their session's attribute
 * (SPEC §1: such a row takes its session's), rolled up by attribute, value and 15-minute UTC
 * bucket of the row's ts. `aggregate` keeps per derived session its sums by bucket as it last
 * counted them (a store table); re-deriving subtracts those under the session's old
 * attributes and adds the sums it reads again under the new ones.
 *
 * Sums are exact integers: counts, or money in cents.
 */
export interface SessionBucket {
  session_id: string;
  bucket: Date;
  sums: readonly bigint[];
}

/** One rollup row's change: the sums of one (attribute, bucket, value). */
export interface SessionBucketRollupDelta {
  dimension: SessionAttribute;
  bucket: Date;
  value: string;
  sums: bigint[];
}

export type SessionAttributes = { session_id: string } & Record<SessionAttribute, string>;

/**
 * What the rollup holds for a set of sessions: each bucket's sums of a session under each of
 * its attributes; the old buckets under the old attributes subtracted, the new under the new
 * added, netted per row; rows whose change is zero in every sum left out. A bucket of a session
 * without attributes (no derived row) counts nowhere.
 */
export function sessionBucketRollupDeltas(
  before: { buckets: readonly SessionBucket[]; sessions: readonly SessionAttributes[] },
  after: { buckets: readonly SessionBucket[]; sessions: readonly SessionAttributes[] },
): SessionBucketRollupDelta[] {
  const deltas = new Map<string, SessionBucketRollupDelta>();
  const add = (state: typeof before, sign: 1n | -1n) => {
    const sessions = new Map(state.sessions.map((s) => [s.session_id, s]));
    for (const b of state.buckets) {
      const session = sessions.get(b.session_id);
      if (!session) continue;
      for (const dimension of ROLLUP_DIMENSIONS) {
        const value = session[dimension];
        const key = `${dimension}\u0000${b.bucket.getTime()}\u0000${value}`;
        const d = deltas.get(key) ?? { dimension, bucket: b.bucket, value, sums: b.sums.map(() => 0n) };
        b.sums.forEach((n, i) => (d.sums[i] += sign * n));
        deltas.set(key, d);
      }
    }
  };
  add(before, -1n);
  add(after, 1n);
  return [...deltas.values()].filter((d) => d.sums.some((n) => n !== 0n));
}

/** The identity of an attribute rollup's row, but for its bucket: its attribute and value. */
export const attributeRow = (delta: { dimension: string; value: string }): string =>
  `${delta.dimension}\u0000${delta.value}`;

/**
 * The same changes by day: each 15-minute bucket's change added to its day's (`dayOf`, the
 * site's local day, which holds whole 15-minute buckets) for the same row (`identity`, the
 * row's key but for its bucket), rows left with no change dropped.
 */
export function byDay<T extends { bucket: Date; sums: bigint[] }>(
  deltas: readonly T[],
  dayOf: (bucket: Date) => Date,
  identity: (delta: T) => string,
): T[] {
  const days = new Map<string, T>();
  for (const delta of deltas) {
    const bucket = dayOf(delta.bucket);
    const key = `${identity(delta)}\u0000${bucket.getTime()}`;
    const day = days.get(key) ?? { ...delta, bucket, sums: delta.sums.map(() => 0n) };
    delta.sums.forEach((n, i) => (day.sums[i] += n));
    days.set(key, day);
  }
  return [...days.values()].filter((d) => d.sums.some((n) => n !== 0n));
}
