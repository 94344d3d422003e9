/** Parses RFC 4180 text (quoted fields, doubled quotes, CRLF records) to check what clients will read. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c === ',') {
      record.push(field);
      field = '';
    } else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else {
      field += c;
    }
  }
  return records;
}

/** What a spreadsheet would run as a formula: a text cell starting with = + - @, a tab or CR. */
export const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER = /^-?\d+(\.\d+)?$/;

/** The text cells of a CSV answer that a spreadsheet would run as a formula (numbers excluded). */
export function formulaCells(text: string): string[] {
  return parseCsv(text)
    .flat()
    .filter((cell) => !NUMBER.test(cell) && FORMULA_START.test(cell));
}
