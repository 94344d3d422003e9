import { ApiProperty } from '@nestjs/swagger';

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
}
