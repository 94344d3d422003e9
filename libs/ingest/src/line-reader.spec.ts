import { Readable } from 'node:stream';
import { readLines } from './line-reader';

async function collect(chunks: string[], max = 1024) {
  const out = [];
  for await (const l of readLines(Readable.from(chunks.map((c) => Buffer.from(c))), max)) out.push(l);
  return out;
}

describe(readLines.name, () => {
  it('splits lines across chunk boundaries and numbers them from 1', async () => {
    const lines = await collect(['{"a":1}\n{"b"', ':2}\r\n', '\nlast']);
    expect(lines).toEqual([
      { number: 1, text: '{"a":1}', tooLong: false },
      { number: 2, text: '{"b":2}', tooLong: false },
      { number: 3, text: '', tooLong: false },
      { number: 4, text: 'last', tooLong: false },
    ]);
  });

  it('keeps multi-byte characters split between chunks intact', async () => {
    const bytes = Buffer.from('é€\n');
    const lines = [];
    for await (const l of readLines(Readable.from([bytes.subarray(0, 1), bytes.subarray(1)]), 100))
      lines.push(l);
    expect(lines[0].text).toBe('é€');
  });

  it('flags an over-long line without holding it, and goes on with the next', async () => {
    const lines = await collect(['x'.repeat(50), 'x'.repeat(50), '\nok\n'], 64);
    expect(lines).toEqual([
      { number: 1, text: '', tooLong: true },
      { number: 2, text: 'ok', tooLong: false },
    ]);
  });
});
