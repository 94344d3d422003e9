import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

export const RESPONSE_FORMATS = ['json', 'csv'] as const;

/**
 * `format=csv` asks a report with rows for RFC 4180 CSV, for clients that cannot set an
 * Accept header (a browser link, a spreadsheet import). Read by the CsvInterceptor.
 */
export class FormatQueryDto {
  @ApiPropertyOptional({
    enum: RESPONSE_FORMATS,
    default: 'json',
    example: 'json',
    description: 'Response format; `csv` is the same as `Accept: text/csv`',
  })
  @IsOptional()
  @IsIn(RESPONSE_FORMATS, { message: 'format must be json or csv' })
  format?: (typeof RESPONSE_FORMATS)[number];
}
