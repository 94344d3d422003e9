import type { Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { RealtimeResponseDto } from './dto/realtime.dto';
import { RealtimeQueries } from './realtime.queries';

const MINUTE_MS = 60_000;
const ACTIVE_WINDOW_MS = 5 * MINUTE_MS;
const RECENT_WINDOW_MS = 30 * MINUTE_MS;
const RECENT_LIMIT = 20;
const TOP_PAGES_LIMIT = 10;

@Injectable()
export class RealtimeService {
  constructor(private readonly queries: RealtimeQueries) {}

  async report(site: Site, now = new Date()): Promise<RealtimeResponseDto> {
    const active = { siteId: site.id, since: new Date(now.getTime() - ACTIVE_WINDOW_MS), until: now };
    const recent = { siteId: site.id, since: new Date(now.getTime() - RECENT_WINDOW_MS), until: now };
    const [activeVisitors, pageviews, recentPageviews, events, topPages] = await Promise.all([
      this.queries.activeVisitors(active),
      this.queries.pageviewCount(recent),
      this.queries.recentPageviews(recent, RECENT_LIMIT),
      this.queries.recentEvents(recent, RECENT_LIMIT),
      this.queries.activePages(active, TOP_PAGES_LIMIT),
    ]);
    return {
      data: {
        active_visitors: activeVisitors,
        pageviews_last_30_minutes: pageviews,
        recent_pageviews: recentPageviews.map((p) => ({
          ts: p.ts.toISOString(),
          path: p.path,
          country: p.country,
          device: p.device,
        })),
        events: events.map((e) => ({ ts: e.ts.toISOString(), name: e.name, path: e.path })),
        top_pages: topPages,
      },
      meta: { site_id: site.id, timezone: site.timezone, generated_at: now.toISOString() },
    };
  }
}
