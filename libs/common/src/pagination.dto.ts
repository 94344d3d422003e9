import { LIMITS } from '@app/config';
import { ApiProperty } from '@nestjs/swagger';
import { FormatQueryDto } from './format-query.dto';
import { QueryInt } from './query-decorators';

export class PaginationQueryDto extends FormatQueryDto {
  @QueryInt({ min: 1, max: 1_000_000, default: 1, description: 'Page number, from 1' })
  page: number = 1;

  @QueryInt({ min: 1, max: LIMITS.maxPageSize, default: 100, description: 'Items per page' })
  limit: number = 100;
}

export class PageMetaDto {
  @ApiProperty({ example: 1 })
  page!: number;

  @ApiProperty({ example: 100 })
  limit!: number;

  @ApiProperty({ example: 2, description: 'Total number of items over all pages' })
  total!: number;
}
