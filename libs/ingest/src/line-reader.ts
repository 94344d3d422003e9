import type { Readable } from 'node:stream';

export interface Line {
  number: number;
  text: string;
  /** Set when the line was longer than the limit; `text` is then empty. */
  tooLong: boolean;
}

/** A line's text without the `\r` of a CRLF ending. */
const withoutCr = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text);

/**
 * Splits a byte stream into lines, pulling chunk by chunk (so the source is paused while the
 * consumer works) and never holding more than one over-long line's worth of bytes. Yields the
 * lines each chunk completes, together: one turn of the consumer's `for await` per chunk, not
 * per line (~0.1 s of CPU per 100k lines).
 */
export async function* readLineChunks(
  input: Readable,
  maxLineBytes: number,
  onBytes?: (n: number) => void,
): AsyncGenerator<Line[]> {
  // The start of a line that began in an earlier chunk.
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overflow = false;
  let number = 0;

  const finish = (last: Buffer, from: number, to: number): Line => {
    number++;
    let line: Line;
    if (overflow) line = { number, text: '', tooLong: true };
    else if (parts.length === 0)
      line = { number, text: withoutCr(last.toString('utf8', from, to)), tooLong: false };
    else {
      parts.push(last.subarray(from, to));
      const text = Buffer.concat(parts, partBytes + to - from).toString('utf8');
      line = { number, text: withoutCr(text), tooLong: false };
    }
    parts = [];
    partBytes = 0;
    overflow = false;
    return line;
  };

  for await (const chunk of input) {
    const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    onBytes?.(buf.length);
    const lines: Line[] = [];
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      if (!overflow && partBytes + nl - start > maxLineBytes) overflow = true;
      lines.push(finish(buf, start, nl));
      start = nl + 1;
    }
    if (start < buf.length && !overflow) {
      parts.push(buf.subarray(start));
      partBytes += buf.length - start;
      if (partBytes > maxLineBytes) {
        overflow = true;
        parts = [];
        partBytes = 0;
      }
    }
    if (lines.length > 0) yield lines;
  }
  if (partBytes > 0 || overflow) yield [finish(Buffer.alloc(0), 0, 0)];
}
