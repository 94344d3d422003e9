import { DateRangeQueryDto, QueryInt, requiredOr } from '@app/common';
import { LIMITS } from '@app/config';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { ReportMetaDto } from '@app/common';

export class FunnelQueryDto extends DateRangeQueryDto {
  @ApiProperty({
    description:
      `A JSON array of 1 to ${LIMITS.funnelMaxSteps} ordered steps, at most ${LIMITS.funnelStepsMaxBytes} bytes: ` +
      '`{"type":"pageview","path":"/pricing"}` (a path ending in `*` matches that prefix) or ' +
      '`{"type":"event","name":"signup"}`. URL-encode it.',
    example: '[{"type":"pageview","path":"/pricing"},{"type":"event","name":"signup"}]',
  })
  @IsString({
    message: requiredOr(
      `steps is required: a JSON array of 1 to ${LIMITS.funnelMaxSteps} steps such as [{"type":"pageview","path":"/pricing"}]`,
      'steps must be a JSON array of steps',
    ),
  })
  steps!: string;

  @ApiPropertyOptional({ example: 24 })
  @QueryInt({
    min: 1,
    max: 168,
    default: 24,
    description: 'Completion window in hours, counted from the hit that matched step 1',
  })
  window_hours: number = 24;
}

export class FunnelStepResultDto {
  /** 1-based position of the step. */
  @ApiProperty({ type: 'integer', example: 2 })
  step!: number;

  /** The step's definition, echoed. */
  @ApiProperty({ enum: ['pageview', 'event'], example: 'event' })
  type!: 'pageview' | 'event';

  /** Pageview steps only. */
  @ApiPropertyOptional({ example: '/pricing' })
  path?: string;

  /** Event steps only. */
  @ApiPropertyOptional({ example: 'signup' })
  name?: string;

  /** Visitors with at least one attempt that reached this step. */
  @ApiProperty({ type: 'integer', example: 120 })
  visitors!: number;

  /** % of step-1 visitors. */
  @ApiProperty({ example: 24 })
  conversion_rate!: number;

  /** Visitors of the previous step who did not reach this one (0 for step 1). */
  @ApiProperty({ type: 'integer', example: 380 })
  drop_off!: number;

  /** drop_off as a % of the previous step's visitors (0 for step 1). */
  @ApiProperty({ example: 76 })
  drop_off_rate!: number;
}

export class FunnelDataDto {
  @ApiProperty({ type: 'integer', example: 24 })
  window_hours!: number;

  @ApiProperty({
    example: [
      {
        step: 1,
        type: 'pageview',
        path: '/pricing',
        visitors: 500,
        conversion_rate: 100,
        drop_off: 0,
        drop_off_rate: 0,
      },
      {
        step: 2,
        type: 'event',
        name: 'signup',
        visitors: 120,
        conversion_rate: 24,
        drop_off: 380,
        drop_off_rate: 76,
      },
    ],
  })
  steps!: FunnelStepResultDto[];

  /** Visitors who reached the last step. */
  @ApiProperty({ type: 'integer', example: 120 })
  completed_visitors!: number;

  /** completed_visitors as a % of step-1 visitors. */
  @ApiProperty({ example: 24 })
  conversion_rate!: number;
}

export class FunnelResponseDto {
  data!: FunnelDataDto;

  meta!: ReportMetaDto;
}
