import { ReportDb, ReportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';

export interface HeadlineTotals {
  sessions: number;
  visitors: number;
  bounces: number;
  /** Pageviews of the range's sessions, wherever those pageviews fall. */
  sessionPageviews: number;
  /** Pageviews whose own ts is in the range. */
  pageviews: number;
  /** Σ duration_seconds as the exact decimal string MariaDB returns. */
  durationSeconds: string;
}

export const TOP_LISTS = ['channel', 'source', 'country', 'device', 'entry_path', 'exit_path'] as const;
export type TopList = (typeof TOP_LISTS)[number];

export interface TopListRow {
  list: TopList;
  value: string;
  sessions: number;
}

interface HeadlineRow {
  sessions: number | string;
  visitors: number | string;
  bounces: number | string;
  session_pageviews: number | string;
  duration_seconds: string;
  pageviews: number | string;
}

@Injectable()
export class OverviewQueries {
  constructor(private readonly db: ReportDb) {}

  /** Session metrics by session start, pageviews by their own ts (SPEC §1 attribution). */
  async headlineTotals(siteId: number, range: ReportRange): Promise<HeadlineTotals> {
    const [row] = await this.db.select<HeadlineRow>(
      `SELECT COUNT(*) AS sessions, COUNT(DISTINCT s.visitor_id) AS visitors,
         COALESCE(SUM(s.is_bounce), 0) AS bounces, COALESCE(SUM(s.pageviews), 0) AS session_pageviews,
         COALESCE(SUM(s.duration_seconds), 0) AS duration_seconds,
         (SELECT COUNT(*) FROM hits h
           WHERE h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts < ?) AS pageviews
       FROM sessions s
       WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?`,
      [siteId, range.startUtc, range.endUtc, siteId, range.startUtc, range.endUtc],
    );
    return {
      sessions: Number(row.sessions),
      visitors: Number(row.visitors),
      bounces: Number(row.bounces),
      sessionPageviews: Number(row.session_pageviews),
      pageviews: Number(row.pageviews),
      durationSeconds: String(row.duration_seconds),
    };
  }

  /**
   * The top `limit` values of each list over the range's sessions, by sessions desc then
   * value asc (binary order). Sessions without pageviews have no entry or exit path.
   */
  async topLists(siteId: number, range: ReportRange, limit: number): Promise<TopListRow[]> {
    const params: unknown[] = [];
    const parts = TOP_LISTS.map((list) => {
      params.push(siteId, range.startUtc, range.endUtc, limit);
      const pathFilter = list.endsWith('_path') ? ` AND s.${list} IS NOT NULL` : '';
      return `(SELECT '${list}' AS list, s.${list} AS value, COUNT(*) AS sessions FROM sessions s
         WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?${pathFilter}
         GROUP BY s.${list} ORDER BY sessions DESC, value ASC LIMIT ?)`;
    });
    const rows = await this.db.select<{ list: TopList; value: string; sessions: number | string }>(
      `SELECT t.list, t.value, t.sessions FROM (${parts.join(' UNION ALL ')}) t
       ORDER BY t.list, t.sessions DESC, t.value ASC`,
      params,
    );
    return rows.map((r) => ({ list: r.list, value: r.value, sessions: Number(r.sessions) }));
  }
}
