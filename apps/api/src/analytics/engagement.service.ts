import { average, rate, reportMeta, SCROLL_DEPTH_BUCKETS, StatsQuery } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { EngagementResponseDto, ReturningVisitorsDto } from './dto/engagement.dto';
import { EngagementQueries, VisitorReturns } from './engagement.queries';

export function returningVisitors(r: VisitorReturns): ReturningVisitorsDto {
  return {
    new_visitors: r.visitors - r.returning,
    returning_visitors: r.returning,
    returning_share: rate(r.returning, r.visitors),
  };
}

@Injectable()
export class EngagementService {
  constructor(private readonly queries: EngagementQueries) {}

  async report(query: StatsQuery): Promise<EngagementResponseDto> {
    const full = query.site.trackingMode === 'full';
    const [pageviews, sessions, returns] = await Promise.all([
      this.queries.pageviewEngagement(query),
      this.queries.sessionEngagement(query),
      full ? this.queries.visitorReturns(query) : undefined,
    ]);
    const scrolled = pageviews.scrollBuckets.reduce((a, b) => a + b, 0);
    return {
      data: {
        pages_per_session: average(sessions.sessionPageviews, sessions.sessions),
        avg_time_on_page_seconds: average(pageviews.timeOnPageSum, pageviews.timedPageviews),
        scroll_depth: SCROLL_DEPTH_BUCKETS.map(({ label }, i) => ({
          bucket: label,
          pageviews: pageviews.scrollBuckets[i],
          share: rate(pageviews.scrollBuckets[i], scrolled),
        })),
        returning_visitors: returns ? returningVisitors(returns) : null,
      },
      meta: { ...reportMeta(query), tracking_mode: query.site.trackingMode },
    };
  }
}
