import { LRUCache } from 'lru-cache';
import { hash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * A HyperLogLog sketch of visitor ids (SPEC §1 "Visitors": counts over more than one day may
 * be an estimate within 1 %). Precision 16: 65,536 one-byte registers, a relative standard
 * error of 1.04 / √65,536 ≈ 0.41 %, so an estimate stays within 1 % about 98 times in 100.
 * The registers are max-merged, so the sketch of a range is the merge of the sketches of its
 * days and hours. The cardinality comes from Ertl's improved raw estimator ("New cardinality
 * estimation algorithms for HyperLogLog sketches", 2017, algorithm 6), which is unbiased
 * from one id to billions without HLL++'s empirical bias tables or a linear-counting switch.
 * A sketch with few registers set is stored sparse (see `encode`).
 * No package in the registry we draw from does this (docs/decisions/visitor-sketches.md).
 */
export const SKETCH_PRECISION = 16;
export const SKETCH_REGISTERS = 1 << SKETCH_PRECISION;
/** Hash bits left after the register index; a register holds 1 … Q + 1. */
const Q = 64 - SKETCH_PRECISION;
const ALPHA_INF = 1 / (2 * Math.LN2);

export class VisitorSketch {
  constructor(readonly registers: Uint8Array = new Uint8Array(SKETCH_REGISTERS)) {
    checkRegisterCount(registers);
  }

  /** Adds one visitor id: the first 64 bits of its MD5 (16 index bits, 48 for the rank). */
  add(visitorId: string): void {
    this.set(VisitorSketch.position(visitorId));
  }

  /**
   * Where an id lands: its register index × 256 + its rank (hash once, set in several sketches).
   * The digest is read as 'binary' (latin1) text, one character per byte: a Buffer per id cost
   * ~3× the time in allocation and garbage collection (BENCHMARKS.md run BJ).
   */
  static position(visitorId: string): number {
    const h = hash('md5', visitorId, 'binary');
    const index = (h.charCodeAt(0) << 8) | h.charCodeAt(1);
    let rank = 1;
    for (let i = 2; i < 8; i++) {
      const byte = h.charCodeAt(i);
      if (byte === 0) {
        rank += 8;
        continue;
      }
      rank += Math.clz32(byte) - 24;
      break;
    }
    return index * 256 + rank;
  }

  /** Adds an id by its `position`. */
  set(position: number): void {
    const index = position >>> 8;
    const rank = position & 0xff;
    if (rank > this.registers[index]) this.registers[index] = rank;
  }

  /** Makes this the sketch of the union of both id sets. */
  merge(other: VisitorSketch): void {
    maxRegisters(this.registers, other.registers);
  }

  isEmpty(): boolean {
    const a = this.registers;
    for (let i = 0; i < SKETCH_REGISTERS; i++) if (a[i] !== 0) return false;
    return true;
  }

  /** The estimated number of distinct ids added (0 for an empty sketch). */
  estimate(): number {
    const counts = new Array<number>(Q + 2).fill(0);
    for (const r of this.registers) counts[r]++;
    const m = SKETCH_REGISTERS;
    if (counts[0] === m) return 0;
    let z = m * tau(1 - counts[Q + 1] / m);
    for (let k = Q; k >= 1; k--) z = 0.5 * (z + counts[k]);
    z += m * sigma(counts[0] / m);
    return (ALPHA_INF * m * m) / z;
  }

  /**
   * Stored form, its first byte telling which: SPARSE, then (index: uint16 BE, rank: uint8)
   * for each register set, when fewer than a tenth are (an hour of a small site: a few bytes);
   * else DENSE, then the 65,536 registers deflated.
   */
  encode(): Buffer {
    const a = this.registers;
    const set = new Uint16Array(SPARSE_UP_TO);
    let n = 0;
    for (let i = 0; i < SKETCH_REGISTERS && n < SPARSE_UP_TO; i++) if (a[i] !== 0) set[n++] = i;
    if (n < SPARSE_UP_TO) {
      const out = Buffer.allocUnsafe(1 + 3 * n);
      out[0] = SPARSE;
      for (let k = 0, at = 1; k < n; k++, at += 3) {
        out[at] = set[k] >> 8;
        out[at + 1] = set[k] & 0xff;
        out[at + 2] = a[set[k]];
      }
      return out;
    }
    return Buffer.concat([Buffer.of(DENSE), deflateRawSync(a, { level: 1 })]);
  }

  static decode(stored: Buffer): VisitorSketch {
    const sketch = new VisitorSketch();
    sketch.mergeStored(stored);
    return sketch;
  }

  /** Merges a stored sketch into this one without building it first. */
  mergeStored(stored: Buffer): void {
    if (stored[0] === SPARSE) {
      if ((stored.length - 1) % 3 !== 0) throw new Error('a sparse visitor sketch has 3 bytes a register');
      const a = this.registers;
      for (let at = 1; at < stored.length; at += 3) {
        const index = (stored[at] << 8) | stored[at + 1];
        if (stored[at + 2] > a[index]) a[index] = stored[at + 2];
      }
      return;
    }
    if (stored[0] !== DENSE) throw new Error(`unknown visitor sketch format ${stored[0]}`);
    // Merged from the inflated buffer itself: no sketch, and no copy of its 64 KB, around it.
    const registers = inflateRawSync(stored.subarray(1));
    checkRegisterCount(registers);
    maxRegisters(this.registers, registers);
  }
}

/**
 * The registers of the dense stored sketches a reader has inflated, by the row each came from,
 * at most `maxBytes` of them (the stored text and its registers counted), least recently used
 * first out. An entry serves a row only while that row's stored text is the same, compared in
 * full, so what is merged is always what was read. A day's sketch stops changing once its late
 * hits are in, and every report over a 30-day range reads the same ~28 of them: at 10M pageviews
 * inflating them was ~3.7 ms of a request (BENCHMARKS.md run AQ). Sparse sketches merge as they
 * are read.
 */
export class InflatedSketches {
  private readonly entries: LRUCache<string, { stored: string | Buffer; sketch: VisitorSketch }>;

  constructor(maxBytes: number) {
    this.entries = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (e) => e.stored.length + SKETCH_REGISTERS,
    });
  }

  /**
   * Merges the stored sketch `stored`, read from the row `row` names, into `into`: its stored
   * form as the engine reads a BLOB (SqlDialect.blobOut), its bytes or their hex text (mergeHex).
   * A sparse one is merged from the bytes in place; a dense one is inflated once and kept while
   * its row holds the same bytes (a copy: the driver's buffer may be a view of a larger one).
   */
  mergeRow(into: VisitorSketch, row: () => string, stored: string | Uint8Array): void {
    if (typeof stored === 'string') return this.mergeHex(into, row, stored);
    const bytes = Buffer.isBuffer(stored)
      ? stored
      : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
    if (bytes[0] !== DENSE) return into.mergeStored(bytes);
    this.mergeKept(into, row(), bytes, () => bytes);
  }

  /**
   * Merges the stored sketch `hex` (its stored form as hex text), read from the row `row` names,
   * into `into`. A sparse one is merged from the text itself: no key, no cache and no bytes for
   * the thousands of small sketches a request under several attributes reads (BENCHMARKS.md
   * run BJ).
   */
  mergeHex(into: VisitorSketch, row: () => string, hex: string): void {
    if (isSparseHex(hex)) return mergeSparseHex(into.registers, hex);
    this.mergeKept(into, row(), hex, () => Buffer.from(hex, 'hex'));
  }

  /**
   * Merges the sketch of row `key`, stored as `stored` (`bytes` decodes it), from the sketch kept
   * for the row while it was stored the same; else decodes it and, dense, keeps it inflated with
   * its own copy of the stored form.
   */
  private mergeKept(into: VisitorSketch, key: string, stored: string | Buffer, bytes: () => Buffer): void {
    const known = this.entries.get(key);
    if (known !== undefined && sameStored(known.stored, stored)) return into.merge(known.sketch);
    const decoded = bytes();
    if (decoded[0] !== DENSE) return into.mergeStored(decoded);
    // Never merged into: only ever the `other` of a merge.
    const sketch = new VisitorSketch(inflateRawSync(decoded.subarray(1)));
    this.entries.set(key, { stored: typeof stored === 'string' ? stored : Buffer.from(stored), sketch });
    into.merge(sketch);
  }
}

/** Whether two stored forms of a sketch, each its bytes or their hex text, are the same form and value. */
function sameStored(a: string | Buffer, b: string | Buffer): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.equals(b);
}

/**
 * A sketch built from few ids, as aggregate builds one per site hour and day and per attribute
 * value and hour: the positions it was given, kept as a list until they could fill the sparse
 * form, then the registers. `encode` writes exactly what a VisitorSketch given the same ids
 * would, without allocating 65,536 registers for an hour of a small site or value.
 */
export class SparseVisitorSketch {
  private positions: number[] = [];
  private dense: VisitorSketch | null = null;

  /** Adds an id by its `VisitorSketch.position`. */
  set(position: number): void {
    if (this.dense) return this.dense.set(position);
    this.positions.push(position);
    if (this.positions.length > 4 * SPARSE_UP_TO) this.densify();
  }

  /** Merges a stored sketch (either form). */
  mergeStored(stored: Buffer): void {
    if (this.dense || stored[0] !== SPARSE) return this.densify().mergeStored(stored);
    for (let at = 1; at + 2 < stored.length; at += 3) {
      this.set((((stored[at] << 8) | stored[at + 1]) << 8) | stored[at + 2]);
    }
  }

  encode(): Buffer {
    if (this.dense) return this.dense.encode();
    // By index, and by rank within an index: the last position of each index holds its register.
    const sorted = Float64Array.from(this.positions).sort();
    const registers: number[] = [];
    for (let i = 0; i < sorted.length; i++) {
      if (i + 1 === sorted.length || sorted[i + 1] >>> 8 !== sorted[i] >>> 8) registers.push(sorted[i]);
    }
    if (registers.length >= SPARSE_UP_TO) return this.densify().encode();
    const out = Buffer.allocUnsafe(1 + 3 * registers.length);
    out[0] = SPARSE;
    registers.forEach((position, k) => {
      out[1 + 3 * k] = position >>> 16;
      out[2 + 3 * k] = (position >>> 8) & 0xff;
      out[3 + 3 * k] = position & 0xff;
    });
    return out;
  }

  isEmpty(): boolean {
    return this.dense ? this.dense.isEmpty() : this.positions.length === 0;
  }

  private densify(): VisitorSketch {
    if (!this.dense) {
      this.dense = new VisitorSketch();
      for (const position of this.positions) this.dense.set(position);
      this.positions = [];
    }
    return this.dense;
  }
}

function checkRegisterCount(registers: Uint8Array): void {
  if (registers.length !== SKETCH_REGISTERS) {
    throw new Error(`a visitor sketch has ${SKETCH_REGISTERS} registers, not ${registers.length}`);
  }
}

/**
 * `a[i] = max(a[i], b[i])` for every register, four at a time where both arrays can be read as
 * 32-bit words. A register holds at most Q + 1 = 49, so no byte has its top bit set, and
 * `(x | 0x80808080) - y` subtracts byte by byte (no borrow crosses a byte), keeping that bit
 * exactly in the bytes where x ≥ y; it becomes a mask of whole bytes. A comparison per
 * register branched as randomly as the hashes: ~1.1 ns a register, 4.4 ms for the 53 day and
 * hour sketches an engagement request merges at 10M, against 1.3 ms this way.
 */
function maxRegisters(a: Uint8Array, b: Uint8Array): void {
  if (a.byteOffset % 4 !== 0 || b.byteOffset % 4 !== 0) {
    for (let i = 0; i < SKETCH_REGISTERS; i++) if (b[i] > a[i]) a[i] = b[i];
    return;
  }
  const x = new Uint32Array(a.buffer, a.byteOffset, SKETCH_REGISTERS / 4);
  const y = new Uint32Array(b.buffer, b.byteOffset, SKETCH_REGISTERS / 4);
  for (let i = 0; i < x.length; i++) {
    const xi = x[i];
    const yi = y[i];
    const xAtLeastY = ((xi | 0x80808080) - yi) & 0x80808080;
    const keepX = (xAtLeastY >>> 7) * 0xff;
    x[i] = (xi & keepX) | (yi & ~keepX);
  }
}

/** Whether hex text is a sparse stored sketch: its first byte SPARSE (`01`). */
const isSparseHex = (hex: string) => hex.charCodeAt(0) === 0x30 && hex.charCodeAt(1) === 0x31;

/** The value of each hex digit's character code (either case). */
const HEX_DIGITS = new Uint8Array(128);
for (let i = 0; i < 16; i++) {
  HEX_DIGITS['0123456789abcdef'.charCodeAt(i)] = i;
  HEX_DIGITS['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/**
 * VisitorSketch.mergeStored of a sparse sketch from its hex text, each register read in place
 * through a table (as fast as decoding the text to bytes first, without allocating them).
 */
function mergeSparseHex(a: Uint8Array, hex: string): void {
  if ((hex.length - 2) % 6 !== 0) throw new Error('a sparse visitor sketch has 3 bytes a register');
  const d = (at: number) => HEX_DIGITS[hex.charCodeAt(at)];
  for (let at = 2; at < hex.length; at += 6) {
    const index = (d(at) << 12) | (d(at + 1) << 8) | (d(at + 2) << 4) | d(at + 3);
    const rank = (d(at + 4) << 4) | d(at + 5);
    if (rank > a[index]) a[index] = rank;
  }
}

/** The first byte of a stored sketch. */
const DENSE = 0;
const SPARSE = 1;
/** Registers set below which the sparse form (3 bytes each) is kept: 19.7 KB at most. */
const SPARSE_UP_TO = SKETCH_REGISTERS / 10;

/** σ(x) = x + Σₖ x^(2^k) 2^(k−1), for the registers still 0 (Ertl, algorithm 6). */
function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  for (;;) {
    x *= x;
    const previous = z;
    z += x * y;
    y += y;
    if (z === previous) return z;
  }
}

/** τ(x) = (1 − x − Σₖ (1 − x^(2^−k))² 2^−k) / 3, for the registers at their maximum. */
function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  for (;;) {
    x = Math.sqrt(x);
    const previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
    if (z === previous) return z / 3;
  }
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export type SketchGrain = 'hour' | 'day';

/** A half-open UTC interval [start, end) in epoch milliseconds. */
export interface UtcInterval {
  start: number;
  end: number;
}

/**
 * How a UTC range [start, end) reads from sketches: the whole UTC days inside it from day
 * sketches, the whole hours around them from hour sketches, and the ragged quarter hours at
 * either end (zones such as +05:30 and +05:45) from the sessions themselves.
 */
export interface SketchCover {
  days: UtcInterval | null;
  hours: UtcInterval[];
  raw: UtcInterval[];
}

export function sketchCover(start: number, end: number): SketchCover {
  const nonEmpty = (i: UtcInterval) => i.end > i.start;
  const firstHour = Math.ceil(start / HOUR_MS) * HOUR_MS;
  const lastHour = Math.floor(end / HOUR_MS) * HOUR_MS;
  if (firstHour >= lastHour) return { days: null, hours: [], raw: [{ start, end }].filter(nonEmpty) };
  const raw = [
    { start, end: firstHour },
    { start: lastHour, end },
  ].filter(nonEmpty);
  const firstDay = Math.ceil(firstHour / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(lastHour / DAY_MS) * DAY_MS;
  if (firstDay >= lastDay) return { days: null, hours: [{ start: firstHour, end: lastHour }], raw };
  const hours = [
    { start: firstHour, end: firstDay },
    { start: lastDay, end: lastHour },
  ].filter(nonEmpty);
  return { days: { start: firstDay, end: lastDay }, hours, raw };
}

/** The UTC hour a session start falls in (the grain sketches are rebuilt at). */
export function hourOf(at: Date | number): number {
  const ms = typeof at === 'number' ? at : at.getTime();
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

export function dayOf(at: number): number {
  return Math.floor(at / DAY_MS) * DAY_MS;
}

export { DAY_MS, HOUR_MS };
