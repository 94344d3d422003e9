import type { CsvExportOptions, CsvRow } from '@app/common';
import { EcommerceResponseDto } from './dto/ecommerce-response.dto';

/**
 * Two tables in one file, told apart by the `section` column: `product` rows (the top
 * products) and `day` rows (revenue by day); columns a section does not use stay empty.
 */
export const ECOMMERCE_CSV: CsvExportOptions<EcommerceResponseDto> = {
  type: EcommerceResponseDto,
  filename: 'ecommerce',
  table: ({ data }) => ({
    columns: ['section', 'date', 'sku', 'name', 'quantity', 'revenue', 'orders'],
    rows: [
      ...data.top_products.map((p): CsvRow => ({ section: 'product', ...p })),
      ...data.revenue_by_day.map((d): CsvRow => ({ section: 'day', ...d })),
    ],
  }),
  example:
    'section,date,sku,name,quantity,revenue,orders\r\nproduct,,TEE-01,Logo T-shirt,12,238.8,9\r\nday,2026-10-01,,,,119.4,3\r\n',
};
