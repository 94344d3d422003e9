import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ParameterErrorDto {
  /** The query parameter, path parameter or header at fault. */
  @ApiProperty({ example: 'window_hours' })
  parameter!: string;

  @ApiProperty({ example: 'window_hours must not be greater than 168' })
  message!: string;
}

/** RFC 9457 problem details, the body of every error response (`application/problem+json`). */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'about:blank', description: 'A URI reference identifying the problem type' })
  type!: string;

  @ApiProperty({ example: 'Bad Request' })
  title!: string;

  @ApiProperty({ example: 400 })
  status!: number;

  @ApiProperty({ example: 'One or more parameters are invalid.' })
  detail!: string;

  @ApiPropertyOptional({ example: '/api/v1/sites/1/analytics/funnel', description: 'The request path' })
  instance?: string;

  /** Present on 400: each offending parameter. */
  errors?: ParameterErrorDto[];
}
