import { DateRangeQueryDto, oneOf, QueryInt } from '@app/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ReportMetaDto } from '@app/common';

export const BREAKDOWN_METRICS = ['sessions', 'pageviews', 'bounce_rate', 'conv_rate', 'revenue'] as const;
export type BreakdownMetric = (typeof BREAKDOWN_METRICS)[number];

export const BREAKDOWN_DIMENSIONS = ['channel', 'country', 'device', 'browser'] as const;
export type BreakdownDimension = (typeof BREAKDOWN_DIMENSIONS)[number];

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

export class BreakdownQueryDto extends DateRangeQueryDto {
  @ApiProperty({
    enum: BREAKDOWN_METRICS,
    example: 'sessions',
    description:
      '`sessions`, `bounce_rate` and `conv_rate` (converted sessions / sessions × 100, over the site goals) ' +
      'count sessions by their start; `pageviews` and `revenue` (Σ order revenue) count by their own ' +
      "timestamp under their session's attribute.",
  })
  @IsIn(BREAKDOWN_METRICS, { message: oneOf('metric', BREAKDOWN_METRICS) })
  metric!: BreakdownMetric;

  @ApiProperty({
    enum: BREAKDOWN_DIMENSIONS,
    example: 'channel',
    description: "The session attribute (from the session's first hit) to break the metric down by.",
  })
  @IsIn(BREAKDOWN_DIMENSIONS, { message: oneOf('dimension', BREAKDOWN_DIMENSIONS) })
  dimension!: BreakdownDimension;

  @ApiPropertyOptional({
    enum: INTERVALS,
    default: 'day',
    example: 'week',
    description:
      'Bucket size in the report timezone. Weeks start on Monday; the first and last bucket are clipped ' +
      'to the range. `hour` only for ranges of at most 14 days.',
  })
  @IsOptional()
  @IsIn(INTERVALS, { message: `interval must be one of: ${INTERVALS.join(', ')}` })
  interval: (typeof INTERVALS)[number] = 'day';

  @ApiPropertyOptional({ example: 5 })
  @QueryInt({
    min: 1,
    max: 20,
    default: 5,
    description: 'Top values shown as their own series; the rest are summed into "Other"',
  })
  limit: number = 5;
}

export class BreakdownSeriesDto {
  /** The dimension value, or `Other` for the last series: every value not in the top list. */
  @ApiProperty({ example: 'Organic Search' })
  value!: string;

  /** The metric over the whole range for this series; for a rate, the rate over the range (not a mean of points). */
  @ApiProperty({ example: 412 })
  total!: number;

  /** The metric per bucket, aligned with `buckets`. */
  @ApiProperty({ example: [14, 17, 9] })
  points!: number[];
}

export class BreakdownDataDto {
  @ApiProperty({ enum: BREAKDOWN_METRICS, example: 'sessions' })
  metric!: BreakdownMetric;

  @ApiProperty({ enum: BREAKDOWN_DIMENSIONS, example: 'channel' })
  dimension!: BreakdownDimension;

  @ApiProperty({ enum: INTERVALS, example: 'day' })
  interval!: (typeof INTERVALS)[number];

  /**
   * Bucket starts in the report timezone: `YYYY-MM-DD` for day/week/month (a clipped first
   * bucket starts at `from`), ISO date-time with offset for hour.
   */
  @ApiProperty({ example: ['2026-10-01', '2026-10-02', '2026-10-03'] })
  buckets!: string[];

  /** The top `limit` values by the metric's volume, then `Other` (always last). */
  @ApiProperty({
    example: [
      { value: 'Organic Search', total: 40, points: [14, 17, 9] },
      { value: 'Direct', total: 25, points: [8, 9, 8] },
      { value: 'Other', total: 11, points: [3, 5, 3] },
    ],
  })
  series!: BreakdownSeriesDto[];
}

export class BreakdownResponseDto {
  data!: BreakdownDataDto;

  meta!: ReportMetaDto;
}
