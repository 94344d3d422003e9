import { ReportMetaDto } from '@app/common';
import { ApiProperty } from '@nestjs/swagger';

export class GoalConversionsDto {
  @ApiProperty({ type: 'integer', example: 2 })
  id!: number;

  @ApiProperty({ example: 'Reached checkout' })
  name!: string;

  /** `event`: event hits with the name `match`; `path`: pageviews of the path `match` (a trailing `*` matches a prefix). */
  @ApiProperty({ enum: ['event', 'path'], example: 'path' })
  type!: 'event' | 'path';

  @ApiProperty({ example: '/checkout*' })
  match!: string;

  /** Sessions of the range (by session start) that converted this goal, each counted once. */
  @ApiProperty({ type: 'integer', example: 96 })
  conversions!: number;

  /** `conversions` / `sessions` × 100, rounded to 2 decimals; 0 without sessions. */
  @ApiProperty({ example: 6.4 })
  conversion_rate!: number;
}

export class ConversionsDataDto {
  /** Sessions that started in the range. */
  @ApiProperty({ type: 'integer', example: 1500 })
  sessions!: number;

  /** Sessions of the range that converted at least one goal, each counted once however many goals it converted. */
  @ApiProperty({ type: 'integer', example: 120 })
  converted_sessions!: number;

  /** `converted_sessions` / `sessions` × 100, rounded to 2 decimals; 0 without sessions. */
  @ApiProperty({ example: 8 })
  conversion_rate!: number;

  /** Every goal of the site, ordered by id. */
  goals!: GoalConversionsDto[];
}

export class ConversionsResponseDto {
  data!: ConversionsDataDto;

  meta!: ReportMetaDto;
}
