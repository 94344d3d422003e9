import { loadField, loadText } from './bulk-load';

describe('LOAD DATA lines', () => {
  it('writes NULL as \\N and a literal "\\N" escaped, so the two stay apart', () => {
    expect(loadField(null)).toBe('\\N');
    expect(loadField(undefined)).toBe('\\N');
    expect(loadField('\\N')).toBe('\\\\N');
    expect(loadField('NULL')).toBe('NULL');
  });

  it('escapes the characters LOAD DATA reads as field and line ends, and the escape itself', () => {
    expect(loadField('a\tb\nc\rd\\e\0f')).toBe('a\\tb\\nc\\rd\\\\e\\0f');
    expect(loadField(`it's "quoted", 100% _wild_ 😀 `)).toBe(`it's "quoted", 100% _wild_ 😀 `);
  });

  it('writes a Date as the UTC DATETIME(3) text and numbers as they print', () => {
    expect(loadField(new Date('2026-03-08T06:59:59.999Z'))).toBe('2026-03-08 06:59:59.999');
    expect(loadField(new Date('2026-01-01T00:00:00Z'))).toBe('2026-01-01 00:00:00.000');
    expect(loadField(42)).toBe('42');
    expect(loadField('12.50')).toBe('12.50');
  });

  it('joins fields with tabs and ends every row with a newline', () => {
    expect(
      loadText([
        [1, 'a b', null],
        [2, 'x\ty', '\\'],
      ]),
    ).toBe('1\ta b\t\\N\n2\tx\\ty\t\\\\\n');
    expect(loadText([])).toBe('');
  });
});
