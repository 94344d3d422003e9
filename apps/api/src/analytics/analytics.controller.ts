import { CurrentSite, SiteScoped } from '@app/auth';
import { ApiStandardErrors, CsvExport } from '@app/common';
import type { Site } from '@app/db';
import { StatsQueryParser } from '@app/stats';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { BREAKDOWN_CSV, ENGAGEMENT_CSV, FUNNEL_CSV, OVERVIEW_CSV } from './analytics.csv';
import { BreakdownService } from './breakdown.service';
import { BreakdownQueryDto, BreakdownResponseDto } from './dto/breakdown.dto';
import { EngagementQueryDto, EngagementResponseDto } from './dto/engagement.dto';
import { FunnelQueryDto, FunnelResponseDto } from './dto/funnel.dto';
import { OverviewQueryDto, OverviewResponseDto } from './dto/overview.dto';
import { RealtimeQueryDto, RealtimeResponseDto } from './dto/realtime.dto';
import { EngagementService } from './engagement.service';
import { FunnelService } from './funnel.service';
import { OverviewService } from './overview.service';
import { RealtimeService } from './realtime.service';
import { CachedReport } from '../report-cache/cached-report.decorator';

const RANGE_NOTE =
  'Sessions, visitors, bounces, durations and conversions belong to the day of the session start; ' +
  'pageviews, events and revenue to the day of their own timestamp. Visitor counts are exact.';

@ApiTags('analytics')
@ApiBearerAuth()
@ApiStandardErrors()
@SiteScoped()
@Controller('sites/:id/analytics')
export class AnalyticsController {
  constructor(
    private readonly overviews: OverviewService,
    private readonly breakdowns: BreakdownService,
    private readonly engagements: EngagementService,
    private readonly realtimes: RealtimeService,
    private readonly funnels: FunnelService,
    private readonly parser: StatsQueryParser,
  ) {}

  @Get('overview')
  @ApiOperation({
    operationId: 'getOverview',
    summary: 'Headline metrics and top lists of a date range',
    description:
      `${RANGE_NOTE} Top lists are ordered by sessions desc, then value asc; \`share\` is the % of the ` +
      "range's sessions. With `compare`, `data.comparison` holds the headline metrics of the comparison " +
      'range and their % change (`null` when the previous value is 0).',
  })
  @CachedReport()
  @CsvExport(OVERVIEW_CSV)
  async overview(@CurrentSite() site: Site, @Query() query: OverviewQueryDto): Promise<OverviewResponseDto> {
    return this.overviews.report(await this.parser.parse(site, query), query);
  }

  @Get('breakdown-timeseries')
  @ApiOperation({
    operationId: 'getBreakdownTimeseries',
    summary: 'A metric over time, broken down by a session attribute: top series plus "Other"',
    description:
      `${RANGE_NOTE} The top \`limit\` values are ranked by the metric's volume (sessions for sessions, ` +
      'bounce_rate and conv_rate; pageviews; revenue), ties by value. The last series is always "Other": ' +
      'every remaining value, rates computed over their union; zeros when nothing remains.',
  })
  @CachedReport()
  @CsvExport(BREAKDOWN_CSV)
  async breakdown(
    @CurrentSite() site: Site,
    @Query() query: BreakdownQueryDto,
  ): Promise<BreakdownResponseDto> {
    return this.breakdowns.report(await this.parser.parse(site, query), query);
  }

  @Get('engagement')
  @ApiOperation({
    operationId: 'getEngagement',
    summary: 'Pages per session, time on page, scroll depth and returning visitors',
    description:
      `${RANGE_NOTE} \`returning_visitors\` is \`null\` for cookieless sites (\`meta.tracking_mode\`): ` +
      'their visitor ids rotate daily.',
  })
  @CachedReport()
  @CsvExport(ENGAGEMENT_CSV)
  async engagement(
    @CurrentSite() site: Site,
    @Query() query: EngagementQueryDto,
  ): Promise<EngagementResponseDto> {
    return this.engagements.report(await this.parser.parse(site, query));
  }

  @Get('realtime')
  @ApiOperation({
    operationId: 'getRealtime',
    summary: 'Live activity of the last 5 and 30 minutes',
    description:
      'Reads the hits as imported, without waiting for aggregation. Takes no parameters. Timestamps are UTC; ' +
      "`meta.timezone` is the site's zone for display.",
  })
  @ApiOkResponse({ type: RealtimeResponseDto })
  async realtime(@CurrentSite() site: Site, @Query() _query: RealtimeQueryDto): Promise<RealtimeResponseDto> {
    return this.realtimes.report(site);
  }

  @Get('funnel')
  @ApiOperation({
    operationId: 'getFunnel',
    summary: 'Visitors through ordered steps within a completion window',
    description:
      'Per visitor: every hit matching step 1 in the range starts an attempt at t1; the attempt reaches step ' +
      'k+1 when a later hit (hit order) matches step k+1 no later than t1 + `window_hours`, even after `to`. ' +
      'A visitor counts for a step when any attempt reaches it.',
  })
  @CachedReport()
  @CsvExport(FUNNEL_CSV)
  async funnel(@CurrentSite() site: Site, @Query() query: FunnelQueryDto): Promise<FunnelResponseDto> {
    return this.funnels.report(await this.parser.parse(site, query), query);
  }
}
