import { Sql, SqlDialect } from '@app/db';
import { toCents } from '@app/stats/commerce';
import {
  SessionAttributes,
  SessionBucket,
  SessionBucketRollupDelta,
  sessionBucketRollupDeltas,
  byDay,
} from '@app/stats/rollups/session-bucket-rollup';
import { rollupBucket } from '@app/stats/rollups/session-rollup';
import { sql } from 'kysely';
import { EntityManager } from 'typeorm';
import { inList, replaceSessionRows, writeRollupDeltas } from './rollup-writer';

/** A summed column: a count, or money (DECIMAL(…,2); cents on SQLite). */
export interface BucketSum {
  column: string;
  money?: boolean;
}

/**
 * One rollup of rows stamped with their own ts under their session's attributes
 * (libs/stats/src/rollups/session-bucket-rollup.ts): its table, the per-session store, the
 * sums (the first is the count that is 0 exactly when a row holds nothing), and the source
 * rows of a site's sessions: `session_id`, `ts`, then one column per sum (a row's own value).
 */
export interface SessionBucketRollupTable {
  rollup: string;
  /** The same rows by the site's local day (the day of each 15-minute bucket). */
  dayRollup: string;
  store: string;
  sums: readonly BucketSum[];
  source(
    d: SqlDialect,
    siteId: number,
    sessionIds: readonly string[],
  ): { sql: string; parameters: unknown[] };
}

/** Money as its decimal string, from cents (the dialect binds it for the column). */
const fromCents = (cents: bigint) => {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
};

/**
 * Keeps a session-bucket rollup equal to its source rows under the derived sessions'
 * attributes: in each chunk's transaction, a session's stored buckets under its old attributes
 * are subtracted, its rows read again and added under its new ones, and the stored buckets
 * replaced.
 */
export class SessionBucketRollupBuilder {
  constructor(
    private readonly sql: Sql,
    private readonly table: SessionBucketRollupTable,
  ) {}

  async apply(
    em: EntityManager,
    siteId: number,
    sessionIds: readonly string[],
    before: readonly SessionAttributes[],
    after: readonly SessionAttributes[],
    dayOf: (bucket: Date) => Date,
  ): Promise<void> {
    if (sessionIds.length === 0) return;
    const d = this.sql.dialect;
    const { sums } = this.table;
    const read = (column: string, money?: boolean) =>
      money ? d.decimalText(sql.ref(column), 2).compile(d.builder).sql : column;
    const exact = (value: unknown, money?: boolean) =>
      money ? toCents(value as string) : BigInt(Number(value));
    const stored: SessionBucket[] = (
      await em.query<Array<Record<string, unknown>>>(
        `SELECT session_id, bucket, ${sums.map((s) => `${read(s.column, s.money)} AS ${s.column}`).join(', ')}
         FROM ${this.table.store} WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      )
    ).map((r) => ({
      session_id: r.session_id as string,
      bucket: new Date(r.bucket as Date),
      sums: sums.map((s) => exact(r[s.column], s.money)),
    }));
    const derived = new Set(after.map((s) => s.session_id));
    const source = this.table.source(d, siteId, sessionIds);
    const now = new Map<string, SessionBucket & { sums: bigint[] }>();
    for (const r of await em.query<Array<Record<string, unknown>>>(source.sql, source.parameters)) {
      const sessionId = r.session_id as string;
      if (!derived.has(sessionId)) continue;
      const bucket = rollupBucket(new Date(r.ts as Date));
      const key = `${sessionId}\u0000${bucket.getTime()}`;
      const row = now.get(key) ?? { session_id: sessionId, bucket, sums: sums.map(() => 0n) };
      sums.forEach((s, i) => (row.sums[i] += exact(r[s.column], s.money)));
      now.set(key, row);
    }
    const out = (n: bigint, money?: boolean) => (money ? d.decimalIn(fromCents(n), 2) : Number(n));
    const deltas = sessionBucketRollupDeltas(
      { buckets: stored, sessions: before },
      { buckets: [...now.values()], sessions: after },
    );
    for (const [table, rows] of [
      [this.table.rollup, deltas],
      [this.table.dayRollup, byDay(deltas, dayOf)],
    ] as const) {
      await writeRollupDeltas<SessionBucketRollupDelta>(em, d, siteId, rows, {
        table,
        keys: ['dimension', 'bucket', 'value'],
        sums: sums.map((s) => s.column),
        identity: ['dimension', 'bucket', 'value'],
        keyValues: (r) => [r.dimension, r.bucket, r.value],
        sumValues: (r) => r.sums.map((n, i) => out(n, sums[i].money)),
        count: { column: sums[0].column, of: (r) => Number(r.sums[0]) },
      });
    }
    await replaceSessionRows(
      em,
      d,
      siteId,
      sessionIds,
      stored.length > 0,
      this.table.store,
      ['session_id', 'bucket', ...sums.map((s) => s.column)],
      [...now.values()].map((r) => [r.session_id, r.bucket, ...r.sums.map((n, i) => out(n, sums[i].money))]),
    );
  }
}

/** Pageviews by session attribute (migration 1765700000000). */
export const PAGEVIEW_ROLLUP: SessionBucketRollupTable = {
  rollup: 'pageview_rollups',
  dayRollup: 'pageview_day_rollups',
  store: 'session_pageview_buckets',
  sums: [{ column: 'pageviews' }],
  source: (_d, siteId, sessionIds) => ({
    sql: `SELECT session_id, ts, 1 AS pageviews FROM hits WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)}) AND type = 'pageview'`,
    parameters: [siteId, ...sessionIds],
  }),
};

/** Orders and revenue by session attribute (migration 1766000000000). */
export const ORDER_ATTRIBUTE_ROLLUP: SessionBucketRollupTable = {
  rollup: 'revenue_rollups',
  dayRollup: 'revenue_day_rollups',
  store: 'session_order_buckets',
  sums: [{ column: 'orders' }, { column: 'revenue', money: true }],
  source: (d, siteId, sessionIds) => ({
    sql: `SELECT session_id, ts, 1 AS orders, ${d.decimalText(sql.ref('revenue'), 2).compile(d.builder).sql} AS revenue
          FROM orders WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
    parameters: [siteId, ...sessionIds],
  }),
};
