import type { Readable } from 'node:stream';

export interface Line {
  number: number;
  text: string;
  /** Set when the line was longer than the limit; `text` is then empty. */
  tooLong: boolean;
}

/**
 * Splits a byte stream into lines, pulling chunk by chunk (so the source is paused while the
 * consumer works) and never holding more than one over-long line's worth of bytes.
 */
export async function* readLines(
  input: Readable,
  maxLineBytes: number,
  onBytes?: (n: number) => void,
): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let overflow = false;
  let number = 0;

  const finish = (): Line => {
    number++;
    const line: Line = overflow
      ? { number, text: '', tooLong: true }
      : { number, text: Buffer.concat(parts, partBytes).toString('utf8').replace(/\r$/, ''), tooLong: false };
    parts = [];
    partBytes = 0;
    overflow = false;
    return line;
  };

  for await (const chunk of input) {
    const buf: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    onBytes?.(buf.length);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      if (!overflow) {
        parts.push(buf.subarray(start, nl));
        partBytes += nl - start;
        if (partBytes > maxLineBytes) overflow = true;
      }
      yield finish();
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
  }
  if (partBytes > 0 || overflow) yield finish();
}
