import { Readable } from 'node:stream';
import { Line, readLineChunks } from './line-reader';

async function collect(chunks: string[], max = 1024) {
  const out: Line[] = [];
  for await (const lines of readLineChunks(Readable.from(chunks.map((c) => Buffer.from(c))), max))
    out.push(...lines);
  return out;
}

describe(readLineChunks.name, () => {
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
    const lines: Line[] = [];
    for await (const chunk of readLineChunks(Readable.from([bytes.subarray(0, 1), bytes.subarray(1)]), 100))
      lines.push(...chunk);
    expect(lines[0].text).toBe('é€');
  });

  it('flags an over-long line without holding it, and goes on with the next', async () => {
    const lines = await collect(['x'.repeat(50), 'x'.repeat(50), '\nok\n'], 64);
    expect(lines).toEqual([
      { number: 1, text: '', tooLong: true },
      { number: 2, text: 'ok', tooLong: false },
    ]);
  });

  it('yields the lines a chunk completes together, and a line split across chunks with the chunk that ends it', async () => {
    const chunks: string[][] = [];
    for await (const lines of readLineChunks(
      Readable.from([Buffer.from('a\nb\nc'), Buffer.from('d\ne')]),
      100,
    ))
      chunks.push(lines.map((l) => l.text));
    expect(chunks).toEqual([['a', 'b'], ['cd'], ['e']]);
  });
});
