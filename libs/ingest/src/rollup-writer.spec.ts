import { inListParts, MAX_IN_LIST, mergeByIdentity, sortByIdentity } from './rollup-writer';

describe('inListParts', () => {
  const lengths = (n: number) => inListParts(Array.from({ length: n }, (_, i) => i)).map((p) => p.length);

  it('keeps a list of up to MAX_IN_LIST values whole', () => {
    expect(lengths(0)).toEqual([]);
    expect(lengths(1)).toEqual([1]);
    expect(lengths(MAX_IN_LIST)).toEqual([MAX_IN_LIST]);
  });

  it('cuts a longer list into parts under 1,000 values of nearly equal length, in order', () => {
    expect(MAX_IN_LIST).toBeLessThan(1000);
    expect(lengths(MAX_IN_LIST + 1)).toEqual([451, 450]);
    expect(lengths(2000)).toEqual([667, 667, 666]);
    expect(inListParts(Array.from({ length: 2000 }, (_, i) => i)).flat()).toEqual(
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });
});

describe('sortByIdentity', () => {
  it('orders rows by site, then by each identity column (numbers, strings, dates, hashes), leaving the rest', () => {
    const day = (d: number) => new Date(Date.UTC(2026, 2, d));
    const hash = (b: number) => Buffer.from([b, 0]);
    const rows: unknown[][] = [
      [2, 'country', day(1), hash(1), 'row a', 5],
      [1, 'source', day(2), hash(2), 'row b', 1],
      [1, 'country', day(3), hash(1), 'row c', 2],
      [1, 'country', day(2), hash(9), 'row d', 3],
      [1, 'country', day(2), hash(3), 'row e', 4],
      [1, 'country', day(2), hash(3), 'row f', 9],
    ];
    sortByIdentity(rows, 3);
    expect(rows.map((r) => r[4])).toEqual(['row e', 'row f', 'row d', 'row c', 'row b', 'row a']);
  });

  it('compares only the identity: rows equal in it keep their order', () => {
    const rows: unknown[][] = [
      [1, 'x', 'second column differs', 2],
      [1, 'x', 'another', 1],
    ];
    sortByIdentity(rows, 1);
    expect(rows.map((r) => r[3])).toEqual([2, 1]);
  });
});

describe('mergeByIdentity', () => {
  const day = (d: number) => new Date(Date.UTC(2026, 2, d));

  it("adds up the integer sums of rows of one site and identity, keeping the first row's other columns", () => {
    // site, dimension, bucket | stored beside | sessions, bounces
    const rows: unknown[][] = [
      [1, 'country', day(1), 'first', 10, 2],
      [1, 'country', day(1), 'second', 15, 0],
      [1, 'country', day(1), 'third', -6, -1],
      [1, 'country', day(2), 'other day', 1, 1],
      [2, 'country', day(2), 'other site', 1, 0],
    ];
    expect(mergeByIdentity(rows, 2, 2)).toEqual([
      [1, 'country', day(1), 'first', 19, 1],
      [1, 'country', day(2), 'other day', 1, 1],
      [2, 'country', day(2), 'other site', 1, 0],
    ]);
    // The input rows are left as they were.
    expect(rows[0]).toEqual([1, 'country', day(1), 'first', 10, 2]);
  });

  it('drops a row whose sums add up to nothing, and keeps one that only moves another sum', () => {
    const rows: unknown[][] = [
      [1, 'a', 1, 30],
      [1, 'a', -1, -30],
      [1, 'b', 1, 30],
      [1, 'b', -1, -10],
    ];
    expect(mergeByIdentity(rows, 1, 2)).toEqual([[1, 'b', 0, 20]]);
  });

  it('leaves rows with a sum that is not a safe integer for the database to add', () => {
    const rows: unknown[][] = [
      [1, 'a', 1, '12.50'],
      [1, 'a', 1, '0.25'],
      [1, 'b', 1, 0.5],
      [1, 'b', 1, 0.25],
      [1, 'c', 0, '0.00'],
    ];
    expect(mergeByIdentity(rows, 1, 2)).toEqual(rows);
  });

  it('compares identities by value: dates by instant, hashes by bytes, never across types', () => {
    const rows: unknown[][] = [
      [1, day(1), Buffer.from([1, 2]), 1],
      [1, new Date(day(1).getTime()), Buffer.from([1, 2]), 2],
      [1, day(1), Buffer.from([1, 3]), 4],
      [1, '1', 'x', 8],
      [1, 1, 'x', 16],
    ];
    expect(mergeByIdentity(rows, 2, 1).map((r) => r[r.length - 1])).toEqual([3, 4, 8, 16]);
  });
});
