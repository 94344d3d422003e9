import { ReportMetaDto } from '@app/common';
import { ApiProperty } from '@nestjs/swagger';

export class TopProductDto {
  @ApiProperty({ example: 'TSHIRT-BLK-M' })
  sku!: string;

  /** The item name in the first order of the range listing the sku (earliest ts, ties by import order). */
  @ApiProperty({ example: 'T-shirt, black, M', nullable: true, type: String })
  name!: string | null;

  /** Units sold: the sum of the item quantities. */
  @ApiProperty({ type: 'integer', example: 42 })
  quantity!: number;

  /** Σ quantity × price over the item lines, exact to the cent. */
  @ApiProperty({ example: 1049.58 })
  revenue!: number;

  /** Distinct orders listing the sku. */
  @ApiProperty({ type: 'integer', example: 39 })
  orders!: number;
}

export class RevenueDayDto {
  /** A calendar day of the report timezone. */
  @ApiProperty({ example: '2026-10-01', format: 'date' })
  date!: string;

  @ApiProperty({ example: 1234.5 })
  revenue!: number;

  @ApiProperty({ type: 'integer', example: 31 })
  orders!: number;
}

export class EcommerceDataDto {
  /** ISO 4217 code of every amount: the site's currency (purchases in another are rejected at import). */
  @ApiProperty({ example: 'EUR' })
  currency!: string;

  /** Σ order revenue over the orders whose own timestamp lies in the range, exact to the cent. */
  @ApiProperty({ example: 15230.4 })
  revenue!: number;

  /** Orders in the range; a purchase repeating an order_id is the same order. */
  @ApiProperty({ type: 'integer', example: 412 })
  orders!: number;

  /** `revenue` / `orders`, rounded half up to the cent; 0 without orders. */
  @ApiProperty({ example: 36.97 })
  average_order_value!: number;

  /** Sessions that started in the range and contain at least one order. */
  @ApiProperty({ type: 'integer', example: 398 })
  purchasing_sessions!: number;

  /** `purchasing_sessions` / sessions started in the range × 100, rounded to 2 decimals; 0 without sessions. */
  @ApiProperty({ example: 2.31 })
  conversion_rate!: number;

  /** Σ item quantities over the orders of the range. */
  @ApiProperty({ type: 'integer', example: 903 })
  items_sold!: number;

  /** By revenue desc, then sku asc (binary order); at most `limit` entries. */
  top_products!: TopProductDto[];

  /** One entry per calendar day of the range in the report timezone, zeros included. */
  revenue_by_day!: RevenueDayDto[];
}

export class EcommerceResponseDto {
  data!: EcommerceDataDto;

  meta!: ReportMetaDto;
}
