import { rollupBucket } from './session-rollup';

/** A derived session as the purchase rollup sees it: its start, and whether it held an order when derived. */
export interface PurchasedSession {
  started_at: Date | string;
  /** sessions.purchased: 1 when the session had an order (commerce.ts sessionPurchased) as `aggregate` last derived it. */
  purchased: number | string;
}

/** One purchase_rollups row's change: purchasing sessions by 15-minute bucket of their start. */
export interface PurchaseRollupDelta {
  bucket: Date;
  sessions: number;
}

/**
 * What re-deriving sessions changes in the purchase rollup: each old purchasing session
 * subtracted at its old start, each new one added at its new start, netted per bucket; zero
 * changes left out.
 */
export function purchaseRollupDeltas(
  before: readonly PurchasedSession[],
  after: readonly PurchasedSession[],
): PurchaseRollupDelta[] {
  const deltas = new Map<number, PurchaseRollupDelta>();
  const add = (s: PurchasedSession, sign: 1 | -1) => {
    if (Number(s.purchased) === 0) return;
    const bucket = rollupBucket(new Date(s.started_at));
    const d = deltas.get(bucket.getTime()) ?? { bucket, sessions: 0 };
    d.sessions += sign;
    deltas.set(bucket.getTime(), d);
  };
  before.forEach((s) => add(s, -1));
  after.forEach((s) => add(s, 1));
  return [...deltas.values()].filter((d) => d.sessions !== 0);
}
