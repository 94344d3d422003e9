import { DateRangeQueryDto, QueryInt } from '@app/common';

export class EcommerceQueryDto extends DateRangeQueryDto {
  @QueryInt({ min: 1, max: 100, default: 10, description: 'Number of entries in `top_products`' })
  limit: number = 10;
}
