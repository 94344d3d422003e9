import { Sql } from '@app/db';
import {
  EventLinkDelta,
  EventRollupDelta,
  eventRollupDeltas,
  SessionEventBucket,
} from '@app/stats/rollups/event-rollup';
import { rollupBucket } from '@app/stats/rollups/session-rollup';
import { EntityManager } from 'typeorm';
import { inList, SESSIONS_COUNT, writeRollupDeltas, replaceSessionRows } from './rollup-writer';

/**
 * Keeps the event rollups (migration 1765600000000) equal to the event hits of the sessions
 * `aggregate` has processed: in each chunk's transaction, a session's stored buckets
 * (`session_event_buckets`) are subtracted, its event hits are read again and added, and the
 * stored buckets replaced. Every name is rolled up, registered or not.
 */
export class EventRollupBuilder {
  constructor(private readonly sql: Sql) {}

  async apply(em: EntityManager, siteId: number, sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    const d = this.sql.dialect;
    const before = (
      await em.query<
        Array<{ session_id: string; name: string; bucket: Date | string; hits: number | string }>
      >(
        `SELECT session_id, name, bucket, hits FROM session_event_buckets WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      )
    ).map((r) => ({
      session_id: r.session_id,
      name: r.name,
      bucket: new Date(r.bucket),
      hits: Number(r.hits),
    }));
    const hits = await em.query<Array<{ session_id: string; name: string; ts: Date | string }>>(
      `SELECT session_id, name, ts FROM hits WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)}) AND type = 'event'`,
      [siteId, ...sessionIds],
    );
    const after = new Map<string, SessionEventBucket>();
    for (const h of hits) {
      const bucket = rollupBucket(new Date(h.ts));
      const key = `${h.session_id}\u0000${h.name}\u0000${bucket.getTime()}`;
      const row = after.get(key) ?? { session_id: h.session_id, name: h.name, bucket, hits: 0 };
      row.hits++;
      after.set(key, row);
    }
    const deltas = eventRollupDeltas(before, [...after.values()]);
    await writeRollupDeltas<EventRollupDelta>(em, d, siteId, deltas.rollups, {
      table: 'event_rollups',
      keys: ['bucket', 'name'],
      sums: ['occurrences', 'sessions'],
      identity: ['bucket', 'name'],
      keyValues: (r) => [r.bucket, r.name],
      sumValues: (r) => [r.occurrences, r.sessions],
      count: SESSIONS_COUNT,
    });
    await writeRollupDeltas<EventLinkDelta>(em, d, siteId, deltas.links, {
      table: 'event_links',
      keys: ['to_bucket', 'name', 'from_bucket'],
      sums: ['sessions'],
      identity: ['to_bucket', 'name', 'from_bucket'],
      keyValues: (r) => [r.toBucket, r.name, r.fromBucket],
      sumValues: (r) => [r.sessions],
      count: SESSIONS_COUNT,
    });
    await replaceSessionRows(
      em,
      d,
      siteId,
      sessionIds,
      before.length > 0,
      'session_event_buckets',
      ['session_id', 'name', 'bucket', 'hits'],
      [...after.values()].map((r) => [r.session_id, r.name, r.bucket, r.hits]),
    );
  }
}
