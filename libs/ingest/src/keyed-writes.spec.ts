import { KeyedWrites } from './keyed-writes';

/** A write that runs until `finish` is called, recording when it starts. */
function controlled(log: string[], name: string) {
  let finish!: () => void;
  let fail!: (e: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return {
    write: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
    },
    finish: () => finish(),
    fail: (e: Error) => fail(e),
  };
}

const keys = (...k: string[]) => new Set(k);
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedWrites', () => {
  it('runs writes with no key in common side by side, up to the number of writers', async () => {
    const log: string[] = [];
    const writes = new KeyedWrites(2);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => controlled(log, n));
    await writes.submit(keys('1'), a.write);
    await writes.submit(keys('2'), b.write);
    const third = writes.submit(keys('3'), c.write);
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    b.finish();
    await third;
    expect(log).toEqual(['start a', 'start b', 'end b', 'start c']);
    a.finish();
    c.finish();
    await writes.drain();
    expect(log.filter((l) => l.startsWith('end'))).toEqual(['end b', 'end a', 'end c']);
  });

  it('starts a write that shares a key with a running one only once that one has ended', async () => {
    const log: string[] = [];
    const writes = new KeyedWrites(2);
    const [a, b] = ['a', 'b'].map((n) => controlled(log, n));
    await writes.submit(keys('site1\u0000h-x', 'site1\u0000h-y'), a.write);
    const second = writes.submit(keys('site1\u0000h-z', 'site1\u0000h-x'), b.write);
    await settle();
    // A writer is free, but the second batch holds hit x as well: it waits.
    expect(log).toEqual(['start a']);
    a.finish();
    await second;
    expect(log).toEqual(['start a', 'end a', 'start b']);
    b.finish();
    await writes.drain();
  });

  it('writes one at a time, in order, with one writer', async () => {
    const log: string[] = [];
    const writes = new KeyedWrites(1);
    const [a, b] = ['a', 'b'].map((n) => controlled(log, n));
    await writes.submit(keys('1'), a.write);
    const second = writes.submit(keys('2'), b.write);
    await settle();
    expect(log).toEqual(['start a']);
    a.finish();
    await second;
    b.finish();
    await writes.drain();
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('after a failure starts nothing more: the next submit and drain wait for the running writes, then throw it', async () => {
    const log: string[] = [];
    const writes = new KeyedWrites(2);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => controlled(log, n));
    await writes.submit(keys('1'), a.write);
    await writes.submit(keys('2'), b.write);
    a.fail(new Error('batch refused'));
    let settled = false;
    const next = writes.submit(keys('3'), c.write).finally(() => (settled = true));
    next.catch(() => undefined);
    await settle();
    // b is still running: the submit waits for it, and c never starts.
    expect(settled).toBe(false);
    b.finish();
    await expect(next).rejects.toThrow('batch refused');
    expect(log).toEqual(['start a', 'start b', 'end b']);
    await expect(writes.drain()).rejects.toThrow('batch refused');
  });
});
