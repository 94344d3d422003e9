import { ReportDb, ReportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';

export interface PageviewEngagement {
  /** Σ time_on_page_seconds (exact decimal string) and how many pageviews carry one. */
  timeOnPageSum: string;
  timedPageviews: number;
  /** Pageviews per scroll-depth bucket 0-24, 25-49, 50-74, 75-100. */
  scrollBuckets: [number, number, number, number];
}

export interface SessionEngagement {
  sessions: number;
  sessionPageviews: number;
}

export interface VisitorReturns {
  visitors: number;
  returning: number;
}

type Count = number | string;

@Injectable()
export class EngagementQueries {
  constructor(private readonly db: ReportDb) {}

  /** Over the pageviews whose own ts is in the range. */
  async pageviewEngagement(siteId: number, range: ReportRange): Promise<PageviewEngagement> {
    const [row] = await this.db.select<{
      tsum: string | null;
      timed: Count;
      b0: Count;
      b1: Count;
      b2: Count;
      b3: Count;
    }>(
      `SELECT SUM(h.time_on_page_seconds) AS tsum, COUNT(h.time_on_page_seconds) AS timed,
         COALESCE(SUM(h.scroll_depth < 25), 0) AS b0,
         COALESCE(SUM(h.scroll_depth BETWEEN 25 AND 49), 0) AS b1,
         COALESCE(SUM(h.scroll_depth BETWEEN 50 AND 74), 0) AS b2,
         COALESCE(SUM(h.scroll_depth >= 75), 0) AS b3
       FROM hits h WHERE h.site_id = ? AND h.type = 'pageview' AND h.ts >= ? AND h.ts < ?`,
      [siteId, range.startUtc, range.endUtc],
    );
    return {
      timeOnPageSum: row.tsum ?? '0',
      timedPageviews: Number(row.timed),
      scrollBuckets: [Number(row.b0), Number(row.b1), Number(row.b2), Number(row.b3)],
    };
  }

  /** Over the sessions that started in the range. */
  async sessionEngagement(siteId: number, range: ReportRange): Promise<SessionEngagement> {
    const [row] = await this.db.select<{ sessions: Count; pageviews: Count }>(
      `SELECT COUNT(*) AS sessions, COALESCE(SUM(s.pageviews), 0) AS pageviews
       FROM sessions s WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?`,
      [siteId, range.startUtc, range.endUtc],
    );
    return { sessions: Number(row.sessions), sessionPageviews: Number(row.pageviews) };
  }

  /** The range's visitors (of its sessions) and how many had their first-ever session before it. */
  async visitorReturns(siteId: number, range: ReportRange): Promise<VisitorReturns> {
    const [row] = await this.db.select<{ visitors: Count; returners: Count }>(
      `SELECT COUNT(*) AS visitors, COALESCE(SUM(v.first_session_at < ?), 0) AS returners
       FROM (SELECT DISTINCT s.visitor_id FROM sessions s
             WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?) r
       JOIN visitors v ON v.site_id = ? AND v.visitor_id = r.visitor_id`,
      [range.startUtc, siteId, range.startUtc, range.endUtc, siteId],
    );
    return { visitors: Number(row.visitors), returning: Number(row.returners) };
  }
}
