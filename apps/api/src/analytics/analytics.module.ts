import { StatsModule } from '@app/stats';
import { Module } from '@nestjs/common';
import { AnalyticsController } from './analytics.controller';
import { BreakdownQueries } from './breakdown.queries';
import { BreakdownService } from './breakdown.service';
import { EngagementQueries } from './engagement.queries';
import { EngagementService } from './engagement.service';
import { FunnelQueries } from './funnel.queries';
import { FunnelService } from './funnel.service';
import { OverviewQueries } from './overview.queries';
import { OverviewService } from './overview.service';
import { RealtimeQueries } from './realtime.queries';
import { RealtimeService } from './realtime.service';

@Module({
  imports: [StatsModule],
  controllers: [AnalyticsController],
  providers: [
    OverviewService,
    OverviewQueries,
    BreakdownService,
    BreakdownQueries,
    EngagementService,
    EngagementQueries,
    RealtimeService,
    RealtimeQueries,
    FunnelService,
    FunnelQueries,
  ],
})
export class AnalyticsModule {}
