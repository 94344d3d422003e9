import { Sql } from '@app/db';
import type { SessionAttribute } from '@app/stats/definitions';
import {
  PageviewRollupDelta,
  pageviewRollupDeltas,
  SessionPageviewBucket,
} from '@app/stats/rollups/pageview-rollup';
import { rollupBucket } from '@app/stats/rollups/session-rollup';
import { EntityManager } from 'typeorm';
import { inList, writeRollupDeltas, replaceSessionRows } from './rollup-writer';

type SessionAttributes = { session_id: string } & Record<SessionAttribute, string>;

/**
 * Keeps `pageview_rollups` (migration 1765700000000) equal to the pageviews of the derived
 * sessions under their attributes: in each chunk's transaction, a session's stored buckets
 * (`session_pageview_buckets`) under its old attributes are subtracted, its pageviews read
 * again and added under its new ones, and the stored buckets replaced.
 */
export class PageviewRollupBuilder {
  constructor(private readonly sql: Sql) {}

  async apply(
    em: EntityManager,
    siteId: number,
    sessionIds: readonly string[],
    before: readonly SessionAttributes[],
    after: readonly SessionAttributes[],
  ): Promise<void> {
    if (sessionIds.length === 0) return;
    const d = this.sql.dialect;
    const stored = (
      await em.query<Array<{ session_id: string; bucket: Date | string; pageviews: number | string }>>(
        `SELECT session_id, bucket, pageviews FROM session_pageview_buckets WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      )
    ).map((r) => ({ session_id: r.session_id, bucket: new Date(r.bucket), pageviews: Number(r.pageviews) }));
    const derived = new Set(after.map((s) => s.session_id));
    const hits = await em.query<Array<{ session_id: string; ts: Date | string }>>(
      `SELECT session_id, ts FROM hits WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)}) AND type = 'pageview'`,
      [siteId, ...sessionIds],
    );
    const now = new Map<string, SessionPageviewBucket>();
    for (const h of hits) {
      if (!derived.has(h.session_id)) continue;
      const bucket = rollupBucket(new Date(h.ts));
      const key = `${h.session_id}\u0000${bucket.getTime()}`;
      const row = now.get(key) ?? { session_id: h.session_id, bucket, pageviews: 0 };
      row.pageviews++;
      now.set(key, row);
    }
    const deltas = pageviewRollupDeltas(
      { buckets: stored, sessions: before },
      { buckets: [...now.values()], sessions: after },
    );
    await writeRollupDeltas<PageviewRollupDelta>(em, d, siteId, deltas, {
      table: 'pageview_rollups',
      keys: ['dimension', 'bucket', 'value'],
      sums: ['pageviews'],
      identity: ['dimension', 'bucket', 'value'],
      keyValues: (r) => [r.dimension, r.bucket, r.value],
      sumValues: (r) => [r.pageviews],
      count: { column: 'pageviews', of: (r) => r.pageviews },
    });
    await replaceSessionRows(
      em,
      d,
      siteId,
      sessionIds,
      stored.length > 0,
      'session_pageview_buckets',
      ['session_id', 'bucket', 'pageviews'],
      [...now.values()].map((r) => [r.session_id, r.bucket, r.pageviews]),
    );
  }
}
