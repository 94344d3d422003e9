import { inListParts, MAX_IN_LIST, sortByIdentity } from './rollup-writer';

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
