import { HIT_ORDER, MISSING_ATTRIBUTE, ReportDb } from '@app/stats';
import { Injectable } from '@nestjs/common';

export interface RecentPageviewRow {
  ts: Date;
  path: string;
  country: string;
  device: string;
}

export interface RecentEventRow {
  ts: Date;
  name: string;
  path: string | null;
}

export interface ActivePageRow {
  value: string;
  active_visitors: number;
}

const NEWEST_FIRST = HIT_ORDER.split(',')
  .map((column) => `h.${column.trim()} DESC`)
  .join(', ');
const FIRST_HIT_ORDER = HIT_ORDER.split(',')
  .map((column) => `f.${column.trim()}`)
  .join(', ');

/**
 * Realtime reads hits only, never the derived tables, so it shows what was imported a moment
 * ago even before the aggregator has run. Windows are [since, now]: hits stamped after the
 * server's clock are not current yet.
 */
@Injectable()
export class RealtimeQueries {
  constructor(private readonly db: ReportDb) {}

  async activeVisitors(siteId: number, since: Date, now: Date): Promise<number> {
    const [row] = await this.db.select<{ n: number | string }>(
      'SELECT COUNT(DISTINCT h.visitor_id) AS n FROM hits h WHERE h.site_id = ? AND h.ts >= ? AND h.ts <= ?',
      [siteId, since, now],
    );
    return Number(row.n);
  }

  async pageviewCount(siteId: number, since: Date, now: Date): Promise<number> {
    const [row] = await this.db.select<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM hits h
       WHERE h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts <= ?`,
      [siteId, since, now],
    );
    return Number(row.n);
  }

  /** Newest first; country and device come from the first hit of each pageview's session. */
  async recentPageviews(siteId: number, since: Date, now: Date, limit: number): Promise<RecentPageviewRow[]> {
    const firstHit = (column: 'country' | 'device') =>
      `COALESCE((SELECT f.${column} FROM hits f WHERE f.site_id = h.site_id AND f.session_id = h.session_id
         ORDER BY ${FIRST_HIT_ORDER} LIMIT 1), '${MISSING_ATTRIBUTE[column]}')`;
    return this.db.select<RecentPageviewRow>(
      `SELECT h.ts, h.path, ${firstHit('country')} AS country, ${firstHit('device')} AS device
       FROM (SELECT h.site_id, h.session_id, h.ts, h.seq, h.path FROM hits h
             WHERE h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts <= ?
             ORDER BY ${NEWEST_FIRST} LIMIT ?) h
       ORDER BY ${NEWEST_FIRST}`,
      [siteId, since, now, limit],
    );
  }

  async recentEvents(siteId: number, since: Date, now: Date, limit: number): Promise<RecentEventRow[]> {
    return this.db.select<RecentEventRow>(
      `SELECT h.ts, h.name, h.path FROM hits h
       WHERE h.site_id = ? AND h.type = 'event' AND h.ts >= ? AND h.ts <= ?
       ORDER BY ${NEWEST_FIRST} LIMIT ?`,
      [siteId, since, now, limit],
    );
  }

  async activePages(siteId: number, since: Date, now: Date, limit: number): Promise<ActivePageRow[]> {
    const rows = await this.db.select<{ value: string; active_visitors: number | string }>(
      `SELECT h.path AS value, COUNT(DISTINCT h.visitor_id) AS active_visitors FROM hits h
       WHERE h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts <= ?
       GROUP BY h.path ORDER BY active_visitors DESC, value ASC LIMIT ?`,
      [siteId, since, now, limit],
    );
    return rows.map((r) => ({ value: r.value, active_visitors: Number(r.active_visitors) }));
  }
}
