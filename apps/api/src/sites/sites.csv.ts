import type { CsvExportOptions, CsvRow } from '@app/common';
import { SitesResponseDto } from './dto/site.dto';

/** One row per site of the page. */
export const SITES_CSV: CsvExportOptions<SitesResponseDto> = {
  type: SitesResponseDto,
  filename: 'sites',
  table: ({ data }) => ({
    columns: ['id', 'name', 'domain', 'timezone', 'currency', 'tracking_mode', 'created_at'],
    rows: data.map((s): CsvRow => ({ ...s })),
  }),
  example:
    'id,name,domain,timezone,currency,tracking_mode,created_at\r\n1,Shop,shop.example,Europe/Berlin,EUR,full,2026-01-15T09:30:00.000Z\r\n',
};
