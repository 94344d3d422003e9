import { ReportMetaDto } from '@app/common';
import { ApiProperty } from '@nestjs/swagger';

export class RegisteredEventStatsDto {
  /** The event name as the tracker sends it (case-sensitive). */
  @ApiProperty({ example: 'signup' })
  name!: string;

  @ApiProperty({ example: 'A visitor created an account', nullable: true, type: String })
  description!: string | null;

  /** When the operator registered the event (UTC). */
  @ApiProperty({ example: '2026-09-01T08:00:00.000Z', format: 'date-time' })
  registered_at!: string;

  /** Event hits with this name whose own timestamp lies in the range. */
  @ApiProperty({ type: 'integer', example: 412 })
  occurrences!: number;

  /** Distinct sessions those event hits belong to. */
  @ApiProperty({ type: 'integer', example: 380 })
  sessions!: number;
}

export class EventsMetaDto extends ReportMetaDto {
  @ApiProperty({ type: 'integer', example: 1 })
  page!: number;

  @ApiProperty({ type: 'integer', example: 100 })
  limit!: number;

  /** Registered events of the site over all pages. */
  @ApiProperty({ type: 'integer', example: 4 })
  total!: number;
}

export class EventsResponseDto {
  data!: RegisteredEventStatsDto[];

  meta!: EventsMetaDto;
}
