import { Sql } from '@app/db';
import {
  EventLinkDelta,
  eventDayDeltas,
  EventRollupDelta,
  eventRollupDeltas,
  PageEventLinkDelta,
  PageEventRollupDelta,
  pageEventRollupDeltas,
  SessionEventBucket,
} from '@app/stats/rollups/event-rollup';
import { SESSION_PAGES, SESSION_PAGES_BY_SESSION } from '@app/stats/sql/session-pages';
import { rollupBucket } from '@app/stats/rollups/session-rollup';
import { EntityManager } from 'typeorm';
import {
  replaceSessionRows,
  rowsBySite,
  SESSIONS_COUNT,
  sessionsOf,
  siteSessionsIn,
  SitePart,
  writeRollupDeltas,
} from './rollup-writer';

/**
 * Keeps the event rollups (migration 1765600000000) equal to the event hits of the sessions
 * `aggregate` has processed: in each chunk's transaction, a session's stored buckets
 * (`session_event_buckets`) are subtracted, its event hits are read again and added, and the
 * stored buckets replaced. Every name is rolled up, registered or not. The same changes by the
 * site's day (`dayOf`) keep event_day_rollups and event_day_links (migration 1766500000000), and
 * by page key page_event_rollups and page_event_links (migration 1769200000000): a session's
 * buckets before under its page keys in session_pages (still as stored: the aggregator writes a
 * chunk's rows there after this), after under the paths of its pageviews, which are the keys
 * it is given there next.
 */
export class EventRollupBuilder {
  constructor(private readonly sql: Sql) {}

  /** In a chunk's transaction, for the re-derived sessions of several sites at once (`parts`). */
  async apply(
    em: EntityManager,
    parts: ReadonlyArray<Pick<SitePart<unknown>, 'siteId' | 'sessionIds' | 'dayOf'>>,
  ): Promise<void> {
    const sites = sessionsOf(parts);
    if (sites.size === 0) return;
    const d = this.sql.dialect;
    const where = siteSessionsIn(d, sites);
    const storedRows = rowsBySite(
      await em.query<
        Array<{
          site_id: number | string;
          session_id: string;
          name: string;
          bucket: Date | string;
          hits: number | string;
        }>
      >(
        `SELECT site_id, session_id, name, bucket, hits FROM session_event_buckets WHERE ${where.sql}`,
        where.parameters,
      ),
    );
    const hitRows = rowsBySite(
      await em.query<
        Array<{ site_id: number | string; session_id: string; name: string; ts: Date | string }>
      >(
        `SELECT site_id, session_id, name, ts FROM hits WHERE ${where.sql} AND type = 'event'`,
        where.parameters,
      ),
    );
    const pages = await this.pagesOfSessionsWithEvents(em, sites, storedRows, hitRows);
    const hadRows = new Map<number, readonly string[]>();
    const rows: unknown[][] = [];
    for (const { siteId, sessionIds, dayOf } of parts) {
      const before = (storedRows.get(siteId) ?? []).map((r) => ({
        session_id: r.session_id,
        name: r.name,
        bucket: new Date(r.bucket),
        hits: Number(r.hits),
      }));
      if (before.length > 0) hadRows.set(siteId, sessionIds);
      const after = new Map<string, SessionEventBucket>();
      for (const h of hitRows.get(siteId) ?? []) {
        const bucket = rollupBucket(new Date(h.ts));
        const key = `${h.session_id}\u0000${h.name}\u0000${bucket.getTime()}`;
        const row = after.get(key) ?? { session_id: h.session_id, name: h.name, bucket, hits: 0 };
        row.hits++;
        after.set(key, row);
      }
      const deltas = eventRollupDeltas(before, [...after.values()]);
      const days = eventDayDeltas(deltas, dayOf);
      for (const [table, rollups] of [
        ['event_rollups', deltas.rollups],
        ['event_day_rollups', days.rollups],
      ] as const) {
        await writeRollupDeltas<EventRollupDelta>(em, d, siteId, rollups, {
          table,
          keys: ['bucket', 'name'],
          sums: ['occurrences', 'sessions'],
          identity: ['bucket', 'name'],
          keyValues: (r) => [r.bucket, r.name],
          sumValues: (r) => [r.occurrences, r.sessions],
          count: SESSIONS_COUNT,
        });
      }
      for (const [table, links] of [
        ['event_links', deltas.links],
        ['event_day_links', days.links],
      ] as const) {
        await writeRollupDeltas<EventLinkDelta>(em, d, siteId, links, {
          table,
          keys: ['to_bucket', 'name', 'from_bucket'],
          sums: ['sessions'],
          identity: ['to_bucket', 'name', 'from_bucket'],
          keyValues: (r) => [r.toBucket, r.name, r.fromBucket],
          sumValues: (r) => [r.sessions],
          count: SESSIONS_COUNT,
        });
      }
      const byPage = pageEventRollupDeltas(
        before,
        [...after.values()],
        pages.before.get(siteId) ?? new Map(),
        pages.after.get(siteId) ?? new Map(),
      );
      await writeRollupDeltas<PageEventRollupDelta>(em, d, siteId, byPage.rollups, {
        table: 'page_event_rollups',
        keys: ['page_key', 'bucket', 'name'],
        sums: ['occurrences', 'sessions'],
        identity: ['page_key', 'bucket', 'name'],
        keyValues: (r) => [r.pageKey, r.bucket, r.name],
        sumValues: (r) => [r.occurrences, r.sessions],
        count: SESSIONS_COUNT,
      });
      await writeRollupDeltas<PageEventLinkDelta>(em, d, siteId, byPage.links, {
        table: 'page_event_links',
        keys: ['page_key', 'to_bucket', 'name', 'from_bucket'],
        sums: ['sessions'],
        identity: ['page_key', 'to_bucket', 'name', 'from_bucket'],
        keyValues: (r) => [r.pageKey, r.toBucket, r.name, r.fromBucket],
        sumValues: (r) => [r.sessions],
        count: SESSIONS_COUNT,
      });
      for (const r of after.values()) rows.push([siteId, r.session_id, r.name, r.bucket, r.hits]);
    }
    await replaceSessionRows(
      em,
      d,
      hadRows,
      'session_event_buckets',
      ['session_id', 'name', 'bucket', 'hits'],
      rows,
    );
  }

  /**
   * The page keys of the chunk's sessions that have event buckets before or after (the others
   * change no page row): `before` from their rows in session_pages, `after` the paths of their
   * pageviews (as sessionPagesInsert writes them), by site, then session id.
   */
  private async pagesOfSessionsWithEvents(
    em: EntityManager,
    sites: ReadonlyMap<number, readonly string[]>,
    ...rowSets: ReadonlyArray<ReadonlyMap<number, ReadonlyArray<{ session_id: string }>>>
  ): Promise<Record<'before' | 'after', Map<number, Map<string, string[]>>>> {
    const withEvents = new Map<number, string[]>();
    for (const siteId of sites.keys()) {
      const ids = new Set(rowSets.flatMap((set) => (set.get(siteId) ?? []).map((r) => r.session_id)));
      if (ids.size > 0) withEvents.set(siteId, [...ids]);
    }
    const pages = {
      before: new Map<number, Map<string, string[]>>(),
      after: new Map<number, Map<string, string[]>>(),
    };
    if (withEvents.size === 0) return pages;
    const d = this.sql.dialect;
    const where = siteSessionsIn(d, withEvents);
    const read = async (side: 'before' | 'after', statement: string) => {
      const rows = await em.query<Array<{ site_id: number | string; session_id: string; page_key: string }>>(
        statement,
        where.parameters,
      );
      for (const r of rows) {
        const bySession = pages[side].get(Number(r.site_id)) ?? new Map<string, string[]>();
        bySession.set(r.session_id, [...(bySession.get(r.session_id) ?? []), r.page_key]);
        pages[side].set(Number(r.site_id), bySession);
      }
    };
    await read(
      'before',
      `SELECT site_id, session_id, page_key FROM ${d.tableWithIndex(SESSION_PAGES, 'sp', SESSION_PAGES_BY_SESSION)} WHERE ${where.sql}`,
    );
    await read(
      'after',
      `SELECT DISTINCT site_id, session_id, step_key AS page_key FROM hits WHERE ${where.sql} AND type = 'pageview'`,
    );
    return pages;
  }
}
