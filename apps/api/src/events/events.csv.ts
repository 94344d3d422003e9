import type { CsvExportOptions, CsvRow } from '@app/common';
import { EventsResponseDto } from './dto/events-response.dto';

/** One row per registered event of the page. */
export const EVENTS_CSV: CsvExportOptions<EventsResponseDto> = {
  type: EventsResponseDto,
  filename: 'events',
  table: ({ data }) => ({
    columns: ['name', 'description', 'registered_at', 'occurrences', 'sessions'],
    rows: data.map((e): CsvRow => ({ ...e })),
  }),
  example:
    'name,description,registered_at,occurrences,sessions\r\nsignup,A visitor created an account,2026-09-01T08:00:00.000Z,412,380\r\n',
};
