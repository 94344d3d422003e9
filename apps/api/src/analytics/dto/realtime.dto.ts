import { ApiProperty } from '@nestjs/swagger';

/** The realtime snapshot takes no parameters; any query parameter is refused with 400. */
export class RealtimeQueryDto {}

export class RecentPageviewDto {
  /** The pageview's own timestamp, UTC. */
  @ApiProperty({ example: '2026-11-22T10:41:07.120Z', format: 'date-time' })
  ts!: string;

  @ApiProperty({ example: '/pricing' })
  path!: string;

  /** Country of the pageview's session (its first hit), read live. */
  @ApiProperty({ example: 'DE' })
  country!: string;

  /** Device of the pageview's session (its first hit), read live. */
  @ApiProperty({ example: 'desktop' })
  device!: string;
}

export class RecentEventDto {
  @ApiProperty({ example: '2026-11-22T10:40:51.004Z', format: 'date-time' })
  ts!: string;

  @ApiProperty({ example: 'signup' })
  name!: string;

  /** The event's path, when the tracker sent one. */
  @ApiProperty({ example: '/pricing' })
  path!: string | null;
}

export class ActivePageDto {
  @ApiProperty({ example: '/pricing' })
  value!: string;

  /** Distinct visitors with a pageview of this path in the last 5 minutes. */
  @ApiProperty({ type: 'integer', example: 4 })
  active_visitors!: number;
}

export class RealtimeDataDto {
  /** Distinct visitors with any hit in the last 5 minutes (exact). */
  @ApiProperty({ type: 'integer', example: 12 })
  active_visitors!: number;

  @ApiProperty({ type: 'integer', example: 87 })
  pageviews_last_30_minutes!: number;

  /** The 20 newest pageviews of the last 30 minutes, newest first. */
  recent_pageviews!: RecentPageviewDto[];

  /** The 20 newest custom events of the last 30 minutes, newest first. */
  events!: RecentEventDto[];

  /** The 10 paths with the most distinct visitors among the last 5 minutes' pageviews, ties by path. */
  top_pages!: ActivePageDto[];
}

export class RealtimeMetaDto {
  @ApiProperty({ type: 'integer', example: 1 })
  site_id!: number;

  /** The site's timezone, for displaying the UTC timestamps. */
  @ApiProperty({ example: 'Europe/Berlin' })
  timezone!: string;

  /** The server instant the 5- and 30-minute windows end at. */
  @ApiProperty({ example: '2026-11-22T10:41:30.000Z', format: 'date-time' })
  generated_at!: string;
}

export class RealtimeResponseDto {
  data!: RealtimeDataDto;

  meta!: RealtimeMetaDto;
}
