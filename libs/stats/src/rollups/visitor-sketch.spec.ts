import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import {
  hourOf,
  InflatedSketches,
  sketchCover,
  SKETCH_REGISTERS,
  SparseVisitorSketch,
  VisitorSketch,
} from './visitor-sketch';

const ids = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const sketchOf = (list: readonly string[]) => {
  const s = new VisitorSketch();
  for (const id of list) s.add(id);
  return s;
};
const relativeError = (estimate: number, exact: number) => Math.abs(estimate / exact - 1);
const utc = (text: string) => Date.parse(`${text}Z`);

describe('VisitorSketch', () => {
  it('places an id by the first 64 bits of its MD5: 16 bits of register, then one plus the leading zeros of 48', () => {
    // The MD5 digest read as a number, apart from how position() reads it; over 100k ids, some
    // of whose digests have a zero byte (or two) after the register index.
    const reference = (id: string) => {
      const bits = createHash('md5').update(id, 'utf8').digest().readBigUInt64BE(0);
      const rest = bits & ((1n << 48n) - 1n);
      const rank = rest === 0n ? 49 : 48 - rest.toString(2).length + 1;
      return Number(bits >> 48n) * 256 + rank;
    };
    const all = [...ids(100_000, 'position'), 'é-ü-✓', ''];
    const positions = all.map((id) => VisitorSketch.position(id));
    expect(all.filter((id, i) => positions[i] !== reference(id))).toEqual([]);
    expect(positions.filter((p) => (p & 0xff) > 8).length).toBeGreaterThan(100);
  });

  it('estimates 0 for no id, and counts a handful of ids exactly', () => {
    expect(new VisitorSketch().estimate()).toBe(0);
    for (const n of [1, 2, 3, 10, 50]) expect(Math.round(sketchOf(ids(n, 'few')).estimate())).toBe(n);
  });

  it('counts an id added again once', () => {
    const s = sketchOf(ids(500, 'again'));
    const before = s.estimate();
    for (const id of ids(500, 'again')) s.add(id);
    expect(s.estimate()).toBe(before);
  });

  // Deterministic ids, so each case always gives the same estimate; the bound is SPEC §1's 1 %.
  it.each([1_000, 10_000, 100_000, 400_000])('estimates %i distinct ids within 1 %', (n) => {
    expect(relativeError(sketchOf(ids(n, `n${n}`)).estimate(), n)).toBeLessThan(0.01);
  });

  it('merges to the sketch of the union, overlapping ids counted once', () => {
    const a = ids(60_000, 'a');
    const b = ids(60_000, 'b');
    const left = sketchOf([...a, ...b.slice(0, 20_000)]);
    const right = sketchOf(b);
    left.merge(right);
    expect(left.registers).toEqual(sketchOf([...a, ...b]).registers);
    expect(relativeError(left.estimate(), 120_000)).toBeLessThan(0.01);
  });

  it('stores a sketch with few registers set sparse, a fuller one deflated, and reads both back', () => {
    const few = sketchOf(ids(10, 'few-stored'));
    const sparse = few.encode();
    expect(sparse[0]).toBe(1);
    expect(sparse.length).toBe(1 + 3 * few.registers.filter((r) => r > 0).length);
    expect(VisitorSketch.decode(sparse).registers).toEqual(few.registers);
    const many = sketchOf(ids(20_000, 'many-stored'));
    const dense = many.encode();
    expect(dense[0]).toBe(0);
    expect(dense.length).toBeLessThan(SKETCH_REGISTERS / 2);
    expect(VisitorSketch.decode(dense).registers).toEqual(many.registers);
    // Merged from the stored forms: the union's registers.
    const union = new VisitorSketch();
    union.mergeStored(sparse);
    union.mergeStored(dense);
    expect(union.registers).toEqual(
      sketchOf([...ids(10, 'few-stored'), ...ids(20_000, 'many-stored')]).registers,
    );
    expect(sketchOf([]).isEmpty()).toBe(true);
    expect(few.isEmpty()).toBe(false);
    expect(() => VisitorSketch.decode(Buffer.of(7, 1, 2))).toThrow(/unknown visitor sketch format 7/);
  });

  it('refuses registers of another precision', () => {
    expect(() => new VisitorSketch(new Uint8Array(1024))).toThrow(/65536 registers/);
    const short = Buffer.concat([Buffer.of(0), deflateRawSync(new Uint8Array(1024))]);
    expect(() => VisitorSketch.decode(short)).toThrow(/65536 registers, not 1024/);
  });

  it('merges every pair of register values to their maximum, from aligned and unaligned registers', () => {
    // Every pair (x, y) of 0 … 49 (Q + 1, the largest rank) side by side, in either order.
    const left = new Uint8Array(SKETCH_REGISTERS);
    const right = new Uint8Array(SKETCH_REGISTERS);
    for (let i = 0; i < SKETCH_REGISTERS; i++) {
      left[i] = i % 50;
      right[i] = Math.floor(i / 50) % 50;
    }
    const expected = left.map((x, i) => Math.max(x, right[i]));
    const merged = new VisitorSketch(left.slice());
    merged.merge(new VisitorSketch(right.slice()));
    expect(merged.registers).toEqual(expected);
    // Registers that cannot be read as 32-bit words (an odd offset into their buffer).
    const odd = new Uint8Array(SKETCH_REGISTERS + 1).subarray(1);
    odd.set(right);
    const fromOdd = new VisitorSketch(left.slice());
    fromOdd.merge(new VisitorSketch(odd));
    expect(fromOdd.registers).toEqual(expected);
    // And from the stored (deflated) form.
    const stored = new VisitorSketch(right.slice()).encode();
    expect(stored[0]).toBe(0);
    const fromStored = new VisitorSketch(left.slice());
    fromStored.mergeStored(stored);
    expect(fromStored.registers).toEqual(expected);
  });
});

describe('SparseVisitorSketch', () => {
  const sparseOf = (list: readonly string[]) => {
    const s = new SparseVisitorSketch();
    for (const id of list) s.set(VisitorSketch.position(id));
    return s;
  };

  it('stores what a VisitorSketch of the same ids stores, sparse or dense, ids repeated or not', () => {
    for (const list of [
      [],
      ids(3, 'a'),
      [...ids(500, 'b'), ...ids(500, 'b')],
      ids(6_000, 'c'),
      ids(40_000, 'd'),
    ]) {
      expect(sparseOf(list).encode()).toEqual(sketchOf(list).encode());
    }
    expect(sparseOf([]).isEmpty()).toBe(true);
    expect(sparseOf(['x']).isEmpty()).toBe(false);
    expect(sparseOf(ids(40_000, 'e')).isEmpty()).toBe(false);
  });

  it('merges stored sketches of either form into the sketch of the union', () => {
    for (const [a, b] of [
      [ids(50, 'f'), ids(80, 'g')],
      [ids(50, 'h'), ids(30_000, 'i')],
      [ids(30_000, 'j'), ids(50, 'k')],
    ]) {
      const merged = sparseOf(a);
      merged.mergeStored(sketchOf(b).encode());
      expect(merged.encode()).toEqual(sketchOf([...a, ...b]).encode());
    }
  });
});

describe('InflatedSketches', () => {
  const hex = (s: VisitorSketch) => s.encode().toString('hex');
  const dense = sketchOf(ids(20_000, 'dense'));
  const sparse = sketchOf(ids(30, 'sparse'));
  const base = sketchOf(ids(5_000, 'base'));
  const merged = (...parts: VisitorSketch[]) => {
    const s = new VisitorSketch();
    for (const part of parts) s.merge(part);
    return s;
  };
  const into = () => merged(base);

  it('merges what mergeStored merges, dense or sparse, read once or again', () => {
    const memo = new InflatedSketches(2 ** 20);
    for (const stored of [dense, sparse]) {
      for (let round = 0; round < 2; round++) {
        const s = into();
        memo.mergeHex(s, () => 'day 1', hex(stored));
        expect(s.registers).toEqual(merged(base, stored).registers);
      }
    }
  });

  it('merges a sparse sketch from its text in either case (HEX() writes upper case), without its row key', () => {
    const memo = new InflatedSketches(2 ** 20);
    const noKey = () => {
      throw new Error('a sparse sketch is not kept');
    };
    for (const text of [hex(sparse), hex(sparse).toUpperCase()]) {
      const s = into();
      memo.mergeHex(s, noKey, text);
      expect(s.registers).toEqual(merged(base, sparse).registers);
    }
    expect(() => memo.mergeHex(into(), noKey, `${hex(sparse)}00`)).toThrow('3 bytes a register');
  });

  it('serves a row only while its stored text is the same: a row that changed is read again', () => {
    const memo = new InflatedSketches(2 ** 20);
    const later = merged(dense, sketchOf(ids(20_000, 'late hits')));
    memo.mergeHex(into(), () => 'day 1', hex(dense));
    const s = into();
    memo.mergeHex(s, () => 'day 1', hex(later));
    expect(s.registers).toEqual(merged(base, later).registers);
  });

  it('leaves the sketches it keeps as they were', () => {
    const memo = new InflatedSketches(2 ** 20);
    const first = into();
    memo.mergeHex(first, () => 'day 1', hex(dense));
    memo.mergeHex(into(), () => 'day 1', hex(dense));
    const s = new VisitorSketch();
    memo.mergeHex(s, () => 'day 1', hex(dense));
    expect(s.registers).toEqual(dense.registers);
  });

  it('merges the bytes a driver gives (a Buffer, or a view into a larger buffer) as their hex text', () => {
    const memo = new InflatedSketches(2 ** 20);
    const inside = (b: Buffer) => {
      const packet = Buffer.alloc(b.length + 7, 0xff);
      b.copy(packet, 3);
      return new Uint8Array(packet.buffer, packet.byteOffset + 3, b.length);
    };
    for (const stored of [dense, sparse]) {
      for (const bytes of [stored.encode(), inside(stored.encode()), stored.encode()]) {
        const s = into();
        memo.mergeRow(s, () => 'day 1', bytes);
        expect(s.registers).toEqual(merged(base, stored).registers);
      }
    }
    const s = into();
    memo.mergeRow(s, () => 'day 2', hex(dense));
    expect(s.registers).toEqual(merged(base, dense).registers);
    expect(() => memo.mergeRow(into(), () => 'x', Buffer.concat([sparse.encode(), Buffer.of(0)]))).toThrow(
      '3 bytes a register',
    );
  });

  it('serves a row read as bytes only while its bytes are the same, whatever becomes of the buffer it was read from', () => {
    const memo = new InflatedSketches(2 ** 20);
    const later = merged(dense, sketchOf(ids(20_000, 'late hits')));
    const first = dense.encode();
    memo.mergeRow(into(), () => 'day 1', first);
    // The driver's buffer reused for another packet: the kept copy still tells the row apart.
    later.encode().copy(first, 0, 0, Math.min(first.length, later.encode().length));
    let s = into();
    memo.mergeRow(s, () => 'day 1', dense.encode());
    expect(s.registers).toEqual(merged(base, dense).registers);
    s = into();
    memo.mergeRow(s, () => 'day 1', later.encode());
    expect(s.registers).toEqual(merged(base, later).registers);
  });

  it('stays right when its bytes hold one sketch and two rows take turns', () => {
    const other = sketchOf(ids(20_000, 'other'));
    const memo = new InflatedSketches(hex(dense).length + SKETCH_REGISTERS);
    for (let round = 0; round < 2; round++) {
      for (const [row, stored] of [
        ['day 1', dense],
        ['day 2', other],
      ] as const) {
        const s = into();
        memo.mergeHex(s, () => row, hex(stored));
        expect(s.registers).toEqual(merged(base, stored).registers);
      }
    }
  });
});

describe('sketchCover', () => {
  it('reads whole UTC days from days, whole hours around them from hours', () => {
    // 30 days of America/New_York (UTC−5): 05:00 to 05:00.
    expect(sketchCover(utc('2026-10-25T05:00:00'), utc('2026-11-24T05:00:00'))).toEqual({
      days: { start: utc('2026-10-26T00:00:00'), end: utc('2026-11-24T00:00:00') },
      hours: [
        { start: utc('2026-10-25T05:00:00'), end: utc('2026-10-26T00:00:00') },
        { start: utc('2026-11-24T00:00:00'), end: utc('2026-11-24T05:00:00') },
      ],
      raw: [],
    });
  });

  it('reads the ragged quarter hours of +05:45 from the sessions', () => {
    // Two days of Asia/Kathmandu: local midnight is 18:15 UTC the day before.
    expect(sketchCover(utc('2026-11-21T18:15:00'), utc('2026-11-23T18:15:00'))).toEqual({
      days: { start: utc('2026-11-22T00:00:00'), end: utc('2026-11-23T00:00:00') },
      hours: [
        { start: utc('2026-11-21T19:00:00'), end: utc('2026-11-22T00:00:00') },
        { start: utc('2026-11-23T00:00:00'), end: utc('2026-11-23T18:00:00') },
      ],
      raw: [
        { start: utc('2026-11-21T18:15:00'), end: utc('2026-11-21T19:00:00') },
        { start: utc('2026-11-23T18:00:00'), end: utc('2026-11-23T18:15:00') },
      ],
    });
  });

  it('covers UTC days exactly with no hour and no edge', () => {
    expect(sketchCover(utc('2026-11-01T00:00:00'), utc('2026-11-03T00:00:00'))).toEqual({
      days: { start: utc('2026-11-01T00:00:00'), end: utc('2026-11-03T00:00:00') },
      hours: [],
      raw: [],
    });
  });

  it('uses hours only when no whole UTC day lies inside', () => {
    expect(sketchCover(utc('2026-11-01T05:30:00'), utc('2026-11-02T04:00:00'))).toEqual({
      days: null,
      hours: [{ start: utc('2026-11-01T06:00:00'), end: utc('2026-11-02T04:00:00') }],
      raw: [{ start: utc('2026-11-01T05:30:00'), end: utc('2026-11-01T06:00:00') }],
    });
    expect(sketchCover(utc('2026-11-01T05:15:00'), utc('2026-11-01T05:45:00'))).toEqual({
      days: null,
      hours: [],
      raw: [{ start: utc('2026-11-01T05:15:00'), end: utc('2026-11-01T05:45:00') }],
    });
  });

  it('floors a session start to its UTC hour', () => {
    expect(hourOf(new Date('2026-11-01T05:59:59.999Z'))).toBe(utc('2026-11-01T05:00:00'));
  });
});
