import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { rate, reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import {
  EngagementQueryDto,
  EngagementResponseDto,
  ReturningVisitorsDto,
  SCROLL_BUCKETS,
} from './dto/engagement.dto';
import { EngagementQueries, VisitorReturns } from './engagement.queries';
import { average } from './report-math';

export function returningVisitors(r: VisitorReturns): ReturningVisitorsDto {
  return {
    new_visitors: r.visitors - r.returning,
    returning_visitors: r.returning,
    returning_share: rate(r.returning, r.visitors),
  };
}

@Injectable()
export class EngagementService {
  constructor(
    private readonly queries: EngagementQueries,
    private readonly config: AppConfig,
  ) {}

  async engagement(site: Site, query: EngagementQueryDto): Promise<EngagementResponseDto> {
    const range = reportRange(query, site, this.config.limits.maxRangeDays);
    const full = site.trackingMode === 'full';
    const [pageviews, sessions, returns] = await Promise.all([
      this.queries.pageviewEngagement(site.id, range),
      this.queries.sessionEngagement(site.id, range),
      full ? this.queries.visitorReturns(site.id, range) : undefined,
    ]);
    const scrolled = pageviews.scrollBuckets.reduce((a, b) => a + b, 0);
    return {
      data: {
        pages_per_session: average(sessions.sessionPageviews, sessions.sessions),
        avg_time_on_page_seconds: average(pageviews.timeOnPageSum, pageviews.timedPageviews),
        scroll_depth: SCROLL_BUCKETS.map((bucket, i) => ({
          bucket,
          pageviews: pageviews.scrollBuckets[i],
          share: rate(pageviews.scrollBuckets[i], scrolled),
        })),
        returning_visitors: returns ? returningVisitors(returns) : null,
      },
      meta: { ...reportMeta(site.id, range), tracking_mode: site.trackingMode },
    };
  }
}
