import type { CsvExportOptions, CsvRow } from '@app/common';
import { ConversionsResponseDto } from './dto/conversions-response.dto';

/** One row per goal. */
export const CONVERSIONS_CSV: CsvExportOptions<ConversionsResponseDto> = {
  type: ConversionsResponseDto,
  filename: 'goals',
  table: ({ data }) => ({
    columns: ['id', 'name', 'type', 'match', 'conversions', 'conversion_rate'],
    rows: data.goals.map((g): CsvRow => ({ ...g })),
  }),
  example: 'id,name,type,match,conversions,conversion_rate\r\n1,Signed up,event,signup,96,3.2\r\n',
};
