import { FILTER_DIMENSIONS, FILTER_OPERATORS } from '@app/stats/query/filters';
import { ApiProperty } from '@nestjs/swagger';

/** One condition of `filters` as the report parsed it. */
export class FilterMetaDto {
  @ApiProperty({ enum: FILTER_DIMENSIONS, example: 'country' })
  dimension!: string;

  @ApiProperty({ enum: FILTER_OPERATORS, example: '==' })
  operator!: string;

  /**
   * The values in the parameter's notation: a prefix value keeps its trailing `*`; a backslash
   * stands before a literal `;`, `|`, `\` or trailing `*`.
   */
  @ApiProperty({ type: [String], example: ['DE', 'FR'] })
  values!: string[];
}

/** The `meta` of a date-range report (SPEC §3). */
export class ReportMetaDto {
  @ApiProperty({ type: 'integer', example: 1 })
  site_id!: number;

  /** First day of the report, inclusive, in `timezone`. */
  @ApiProperty({ example: '2026-10-01', format: 'date' })
  from!: string;

  /** Last day of the report, inclusive, in `timezone`. */
  @ApiProperty({ example: '2026-10-30', format: 'date' })
  to!: string;

  /** IANA zone of the report's calendar days and buckets. */
  @ApiProperty({ example: 'Europe/Berlin' })
  timezone!: string;

  /** The `filters` parameter as parsed, one entry per condition in the order given; `[]` without filters. */
  @ApiProperty({ type: [FilterMetaDto] })
  filters!: FilterMetaDto[];
}
