import { inListParts, MAX_IN_LIST } from './rollup-writer';

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
