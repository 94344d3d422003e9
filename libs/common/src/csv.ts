export type CsvValue = string | number | boolean | null | undefined;
export type CsvRow = Record<string, CsvValue>;

export interface CsvTable {
  columns: string[];
  rows: CsvRow[];
}

/** What a spreadsheet reads as the start of a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell that a spreadsheet would run as a formula (`=HYPERLINK(…)`, `+1`, `-cmd`, `@SUM`,
 * or one starting with a tab or CR) gets a leading `'` and is always quoted, as OWASP
 * recommends. Only strings: numbers (a negative one included) are numeric cells, and a
 * spreadsheet cannot read a number as a formula.
 */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

function field(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const text = neutralizeFormula(value);
  return text !== value || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * RFC 4180: a header row, CRLF line ends, fields quoted when they hold `,`, `"`, CR or LF.
 * Text cells that would start a spreadsheet formula are neutralised (neutralizeFormula).
 */
export function toCsv(table: CsvTable): string {
  const lines = [table.columns.map(field).join(',')];
  for (const row of table.rows) lines.push(table.columns.map((c) => field(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
