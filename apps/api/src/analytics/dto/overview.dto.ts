import { DateRangeQueryDto, QueryInt } from '@app/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ReportMetaDto } from '@app/common';

export const COMPARE_MODES = ['previous_period', 'year_over_year'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

export class OverviewQueryDto extends DateRangeQueryDto {
  @ApiPropertyOptional({ example: 10 })
  @QueryInt({ min: 1, max: 100, default: 10, description: 'Items in each top list' })
  limit: number = 10;

  @ApiPropertyOptional({
    enum: COMPARE_MODES,
    example: 'previous_period',
    description:
      'Adds `data.comparison`: `previous_period` = as many days, ending the day before `from`; ' +
      '`year_over_year` = the same dates one year earlier (29 February becomes 28 February).',
  })
  @IsOptional()
  @IsIn(COMPARE_MODES, { message: `compare must be one of: ${COMPARE_MODES.join(', ')}` })
  compare?: CompareMode;
}

export class TopItemDto {
  /** The attribute value (`(unknown)` / `(direct)` when the session's first hit had none), or the path. */
  @ApiProperty({ example: 'Organic Search' })
  value!: string;

  /** Sessions of the range with this value; for entry/exit pages, the sessions entering/leaving there. */
  @ApiProperty({ type: 'integer', example: 412 })
  sessions!: number;

  /** `sessions` as a % of all sessions of the range (0–100, 2 decimals). */
  @ApiProperty({ example: 38.51 })
  share!: number;
}

export class HeadlineMetricsDto {
  /**
   * Distinct visitor ids over the sessions of the range. Exact for a range of one day, under
   * `filters` on pages or goals, under conditions on session attributes that select more than
   * 900 of the site's combinations of them, and while the range holds at most
   * `VISITORS_EXACT_UP_TO` sessions (50,000 by default); above that, over more than one day, a
   * HyperLogLog estimate within 1 % of the exact count (SPEC §1), read from the visitor
   * sketches: the site's hourly and daily ones; under `filters` on one session attribute
   * (`channel`, `source`, `country`, `device` or `browser`) those of the values selected; under
   * conditions on several, the daily ones of the combinations of the five attributes selected.
   */
  @ApiProperty({ type: 'integer', example: 802 })
  visitors!: number;

  /** Sessions that started in the range. */
  @ApiProperty({ type: 'integer', example: 1070 })
  sessions!: number;

  /** Pageviews whose own timestamp is in the range. */
  @ApiProperty({ type: 'integer', example: 3518 })
  pageviews!: number;

  /** % of the range's sessions that bounced (exactly one hit, a pageview). */
  @ApiProperty({ example: 41.87 })
  bounce_rate!: number;

  /** Pageviews of the range's sessions (wherever they fall) / sessions. */
  @ApiProperty({ example: 3.29 })
  pages_per_session!: number;

  /** Mean of last hit − first hit over the range's sessions, in seconds. */
  @ApiProperty({ example: 184.52 })
  avg_session_duration_seconds!: number;
}

/** % change per metric: (current − previous) / previous × 100; `null` when the previous value is 0. */
export class MetricChangeDto {
  /** From the two ranges' `visitors`: computed from estimates where those are estimated. */
  @ApiProperty({ example: 12.5 })
  visitors!: number | null;

  @ApiProperty({ example: 9.07 })
  sessions!: number | null;

  @ApiProperty({ example: -3.1 })
  pageviews!: number | null;

  @ApiProperty({ example: null })
  bounce_rate!: number | null;

  @ApiProperty({ example: 1.23 })
  pages_per_session!: number | null;

  @ApiProperty({ example: -8.4 })
  avg_session_duration_seconds!: number | null;
}

export class OverviewComparisonDto extends HeadlineMetricsDto {
  /** First day of the comparison range. */
  @ApiProperty({ example: '2026-08-31', format: 'date' })
  from!: string;

  /** Last day of the comparison range. */
  @ApiProperty({ example: '2026-09-30', format: 'date' })
  to!: string;

  change!: MetricChangeDto;
}

export class OverviewDataDto extends HeadlineMetricsDto {
  @ApiProperty({ example: [{ value: 'Organic Search', sessions: 412, share: 38.5 }] })
  top_channels!: TopItemDto[];

  @ApiProperty({ example: [{ value: 'google.com', sessions: 300, share: 28.04 }] })
  top_sources!: TopItemDto[];

  @ApiProperty({ example: [{ value: 'DE', sessions: 512, share: 47.85 }] })
  top_countries!: TopItemDto[];

  @ApiProperty({ example: [{ value: 'mobile', sessions: 611, share: 57.1 }] })
  top_devices!: TopItemDto[];

  /** Paths of the sessions' first pageviews; sessions without pageviews have no entry page. */
  @ApiProperty({ example: [{ value: '/', sessions: 498, share: 46.54 }] })
  entry_pages!: TopItemDto[];

  /** Paths of the sessions' last pageviews. */
  @ApiProperty({ example: [{ value: '/thank-you', sessions: 61, share: 5.7 }] })
  exit_pages!: TopItemDto[];

  /** Only with `compare`: the headline metrics of the comparison range. */
  comparison?: OverviewComparisonDto;
}

export class OverviewResponseDto {
  data!: OverviewDataDto;

  meta!: ReportMetaDto;
}
