import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { FormatQueryDto } from './format-query.dto';
import { FiltersQuery } from './query-decorators';

/**
 * The date range and filters of every report but realtime (SPEC §3). The format is checked here; calendar validity,
 * `from` ≤ `to`, the range limit and the zone are checked by resolveRange() and answered as
 * 400s naming the parameter.
 */
export class DateRangeQueryDto extends FormatQueryDto {
  @ApiPropertyOptional({
    description: 'First day, inclusive, in the report timezone. Default: `to` − 29 days.',
    format: 'date',
    example: '2026-10-01',
  })
  @IsOptional()
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'from must be a date in YYYY-MM-DD format' })
  from?: string;

  @ApiPropertyOptional({
    description: 'Last day, inclusive, in the report timezone. Default: today in that timezone.',
    format: 'date',
    example: '2026-10-30',
  })
  @IsOptional()
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'to must be a date in YYYY-MM-DD format' })
  to?: string;

  @ApiPropertyOptional({
    description: "IANA time zone of the report's calendar days and buckets. Default: the site's timezone.",
    example: 'Europe/Berlin',
  })
  @IsOptional()
  @IsString()
  timezone?: string;

  @FiltersQuery()
  filters?: string;
}
