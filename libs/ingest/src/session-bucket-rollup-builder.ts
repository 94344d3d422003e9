import { Sql, SqlDialect } from '@app/db';
import { toCents } from '@app/stats/commerce';
import {
  attributeRow,
  SessionAttributes,
  SessionBucket,
  SessionBucketRollupDelta,
  sessionBucketRollupDeltas,
  byDay,
} from '@app/stats/rollups/session-bucket-rollup';
import { rollupBucket } from '@app/stats/rollups/session-rollup';
import { sql } from 'kysely';
import { EntityManager } from 'typeorm';
import {
  replaceSessionRows,
  rowsBySite,
  sessionsOf,
  siteSessionsIn,
  SitePart,
  SiteSessions,
  writeRollupDeltas,
} from './rollup-writer';

/** A summed column: a count, or money (DECIMAL(…,2); cents on SQLite). */
export interface BucketSum {
  column: string;
  money?: boolean;
}

/**
 * One rollup of rows stamped with their own ts under their session's attributes
 * (libs/stats/src/rollups/session-bucket-rollup.ts): its table, the per-session store, the
 * sums (the first is the count that is 0 exactly when a row holds nothing), and the source
 * rows of the sites' sessions: `site_id`, `session_id`, `ts`, then one column per sum (a row's own value).
 */
export interface SessionBucketRollupTable {
  rollup: string;
  /** The same rows by the site's local day (the day of each 15-minute bucket). */
  dayRollup: string;
  store: string;
  sums: readonly BucketSum[];
  source(d: SqlDialect, sites: SiteSessions): { sql: string; parameters: unknown[] };
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

  /** The same for several sites at once: each statement reads or writes every site's sessions. */
  async apply(em: EntityManager, parts: ReadonlyArray<SitePart<SessionAttributes>>): Promise<void> {
    const sites = sessionsOf(parts);
    if (sites.size === 0) return;
    const d = this.sql.dialect;
    const { sums } = this.table;
    const read = (column: string, money?: boolean) =>
      money ? d.decimalText(sql.ref(column), 2).compile(d.builder).sql : column;
    const exact = (value: unknown, money?: boolean) =>
      money ? toCents(value as string) : BigInt(Number(value));
    const where = siteSessionsIn(d, sites);
    const storedRows = rowsBySite(
      await em.query<Array<Record<string, unknown> & { site_id: number | string }>>(
        `SELECT site_id, session_id, bucket, ${sums.map((s) => `${read(s.column, s.money)} AS ${s.column}`).join(', ')}
         FROM ${this.table.store} WHERE ${where.sql}`,
        where.parameters,
      ),
    );
    const source = this.table.source(d, sites);
    const sourceRows = rowsBySite(
      await em.query<Array<Record<string, unknown> & { site_id: number | string }>>(
        source.sql,
        source.parameters,
      ),
    );
    const out = (n: bigint, money?: boolean) => (money ? d.decimalIn(fromCents(n), 2) : Number(n));
    const hadRows = new Map<number, readonly string[]>();
    const rows: unknown[][] = [];
    for (const { siteId, sessionIds, before, after, dayOf } of parts) {
      const stored: SessionBucket[] = (storedRows.get(siteId) ?? []).map((r) => ({
        session_id: r.session_id as string,
        bucket: new Date(r.bucket as Date),
        sums: sums.map((s) => exact(r[s.column], s.money)),
      }));
      if (stored.length > 0) hadRows.set(siteId, sessionIds);
      const derived = new Set(after.map((s) => s.session_id));
      const now = new Map<string, SessionBucket & { sums: bigint[] }>();
      for (const r of sourceRows.get(siteId) ?? []) {
        const sessionId = r.session_id as string;
        if (!derived.has(sessionId)) continue;
        const bucket = rollupBucket(new Date(r.ts as Date));
        const key = `${sessionId}\u0000${bucket.getTime()}`;
        const row = now.get(key) ?? { session_id: sessionId, bucket, sums: sums.map(() => 0n) };
        sums.forEach((s, i) => (row.sums[i] += exact(r[s.column], s.money)));
        now.set(key, row);
      }
      const deltas = sessionBucketRollupDeltas(
        { buckets: stored, sessions: before },
        { buckets: [...now.values()], sessions: after },
      );
      for (const [table, deltaRows] of [
        [this.table.rollup, deltas],
        [this.table.dayRollup, byDay(deltas, dayOf, attributeRow)],
      ] as const) {
        await writeRollupDeltas<SessionBucketRollupDelta>(em, d, siteId, deltaRows, {
          table,
          keys: ['dimension', 'bucket', 'value'],
          sums: sums.map((s) => s.column),
          identity: ['dimension', 'bucket', 'value'],
          keyValues: (r) => [r.dimension, r.bucket, r.value],
          sumValues: (r) => r.sums.map((n, i) => out(n, sums[i].money)),
          count: { column: sums[0].column, of: (r) => Number(r.sums[0]) },
        });
      }
      for (const r of now.values())
        rows.push([siteId, r.session_id, r.bucket, ...r.sums.map((n, i) => out(n, sums[i].money))]);
    }
    await replaceSessionRows(
      em,
      d,
      hadRows,
      this.table.store,
      ['session_id', 'bucket', ...sums.map((s) => s.column)],
      rows,
    );
  }
}

/** Pageviews by session attribute (migration 1765700000000). */
export const PAGEVIEW_ROLLUP: SessionBucketRollupTable = {
  rollup: 'pageview_rollups',
  dayRollup: 'pageview_day_rollups',
  store: 'session_pageview_buckets',
  sums: [{ column: 'pageviews' }],
  source: (d, sites) => {
    const where = siteSessionsIn(d, sites);
    return {
      sql: `SELECT site_id, session_id, ts, 1 AS pageviews FROM hits WHERE ${where.sql} AND type = 'pageview'`,
      parameters: where.parameters,
    };
  },
};

/** Orders and revenue by session attribute (migration 1766000000000). */
export const ORDER_ATTRIBUTE_ROLLUP: SessionBucketRollupTable = {
  rollup: 'revenue_rollups',
  dayRollup: 'revenue_day_rollups',
  store: 'session_order_buckets',
  sums: [{ column: 'orders' }, { column: 'revenue', money: true }],
  source: (d, sites) => {
    const where = siteSessionsIn(d, sites);
    return {
      sql: `SELECT site_id, session_id, ts, 1 AS orders, ${d.decimalText(sql.ref('revenue'), 2).compile(d.builder).sql} AS revenue
            FROM orders WHERE ${where.sql}`,
      parameters: where.parameters,
    };
  },
};
