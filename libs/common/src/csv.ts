export type CsvValue = string | number | boolean | null | undefined;
export type CsvRow = Record<string, CsvValue>;

export interface CsvTable {
  columns: string[];
  rows: CsvRow[];
}

function field(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180: a header row, CRLF line ends, fields quoted when they hold `,`, `"`, CR or LF. */
export function toCsv(table: CsvTable): string {
  const lines = [table.columns.map(field).join(',')];
  for (const row of table.rows) lines.push(table.columns.map((c) => field(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
