import { toCsv } from './csv';

describe(toCsv.name, () => {
  it('writes a header row and CRLF-terminated records in column order', () => {
    expect(
      toCsv({
        columns: ['b', 'a'],
        rows: [
          { a: 1, b: 'x' },
          { a: 2.5, b: 'y' },
        ],
      }),
    ).toBe('b,a\r\nx,1\r\ny,2.5\r\n');
  });

  it('quotes fields with commas, quotes and line breaks, doubling quotes', () => {
    expect(toCsv({ columns: ['v'], rows: [{ v: 'a,b' }, { v: 'say "hi"' }, { v: 'two\nlines' }] })).toBe(
      'v\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n',
    );
  });

  it('writes null and missing values as empty fields and keeps Unicode as is', () => {
    expect(toCsv({ columns: ['a', 'b', 'c'], rows: [{ a: null, c: 'é€' }] })).toBe('a,b,c\r\n,,é€\r\n');
  });

  it('writes only the header for an empty table', () => {
    expect(toCsv({ columns: ['a'], rows: [] })).toBe('a\r\n');
  });
});
