import { DateRangeQueryDto } from '@app/common';
import { ApiProperty } from '@nestjs/swagger';
import { ReportMetaDto } from '@app/common';

export class EngagementQueryDto extends DateRangeQueryDto {}

export const SCROLL_BUCKETS = ['0-24', '25-49', '50-74', '75-100'] as const;

export class ScrollDepthBucketDto {
  /** Deepest % scrolled, inclusive bounds. */
  @ApiProperty({ enum: SCROLL_BUCKETS, example: '25-49' })
  bucket!: (typeof SCROLL_BUCKETS)[number];

  /** Pageviews of the range whose `scroll_depth` falls in the bucket. */
  @ApiProperty({ type: 'integer', example: 210 })
  pageviews!: number;

  /** % of the range's pageviews that carry a `scroll_depth`. */
  @ApiProperty({ example: 26.25 })
  share!: number;
}

export class ReturningVisitorsDto {
  /**
   * Visitors of the range whose first-ever session started in the range: visitors − returning
   * (an exact count unless the range's visitors are estimated; see `returning_visitors`). Under
   * `filters` on several session attributes where the visitors are estimated, this is the
   * estimate minus the exact returning visitors (never below 0), within 1 % of the visitors.
   */
  @ApiProperty({ type: 'integer', example: 610 })
  new_visitors!: number;

  /**
   * Visitors of the range whose first-ever session started before the range: the range's
   * visitors − its new visitors. Where the overview's `visitors` is a HyperLogLog estimate
   * (more than one day and more than `VISITORS_EXACT_UP_TO` sessions, unfiltered), this is the
   * estimate minus the exact new visitors (never below 0), within 1 % of the visitors. Under
   * `filters` it is exact.
   */
  @ApiProperty({ type: 'integer', example: 192 })
  returning_visitors!: number;

  /** returning / (new + returning) × 100. */
  @ApiProperty({ example: 23.94 })
  returning_share!: number;
}

export class EngagementDataDto {
  /** Pageviews of the range's sessions (by session start) / sessions. */
  @ApiProperty({ example: 3.29 })
  pages_per_session!: number;

  /** Mean `time_on_page_seconds` over the range's pageviews that carry one. */
  @ApiProperty({ example: 47.5 })
  avg_time_on_page_seconds!: number;

  @ApiProperty({
    example: [
      { bucket: '0-24', pageviews: 300, share: 37.5 },
      { bucket: '25-49', pageviews: 210, share: 26.25 },
      { bucket: '50-74', pageviews: 170, share: 21.25 },
      { bucket: '75-100', pageviews: 120, share: 15 },
    ],
  })
  scroll_depth!: ScrollDepthBucketDto[];

  /**
   * Counts over the range's visitors: exact, or from the visitor estimate as `returning_visitors`
   * says. `null` for cookieless sites: their visitor ids
   * rotate daily, so a returning visitor cannot be recognised (see `meta.tracking_mode`).
   */
  returning_visitors!: ReturningVisitorsDto | null;
}

export class EngagementMetaDto extends ReportMetaDto {
  /** `cookieless` explains a `null` `returning_visitors`. */
  @ApiProperty({ enum: ['full', 'cookieless'], example: 'full' })
  tracking_mode!: 'full' | 'cookieless';
}

export class EngagementResponseDto {
  data!: EngagementDataDto;

  meta!: EngagementMetaDto;
}
