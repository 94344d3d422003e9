import { byBytes, leftOutBound, settledTop, topRowsPerBucket, TopListRow } from './overview.queries';

const row = (value: string, sessions: number): TopListRow => ({ list: 'source', value, sessions });

describe("the top of a list from its buckets' top rows", () => {
  it('bounds a value left out by the last row of each bucket that was cut, and by nothing elsewhere', () => {
    // Three buckets read 2 rows each: two gave 2 (their 2nd rows had 7 and 3 sessions), one gave 1.
    expect(
      leftOutBound(
        [
          { rows: 2, last: 7 },
          { rows: 2, last: 3 },
          { rows: 1, last: 40 },
        ],
        2,
      ),
    ).toBe(10);
    expect(leftOutBound([{ rows: 1, last: 40 }], 2)).toBe(0);
    expect(leftOutBound([], 2)).toBe(0);
  });

  it('settles a list only when its last place has more sessions than any value left out can', () => {
    const ranked = [row('google', 30), row('bing', 11)];
    expect(settledTop(ranked, 2, 10)).toEqual(ranked);
    // A value left out could have 11 sessions and come before `bing` by name: not settled.
    expect(settledTop(ranked, 2, 11)).toBeUndefined();
    expect(settledTop(ranked, 2, 12)).toBeUndefined();
    // Fewer candidates than places: a value left out could take the empty place.
    expect(settledTop([row('google', 30)], 2, 1)).toBeUndefined();
    // Nothing left out: whatever was found is the list, however short.
    expect(settledTop([row('google', 30)], 2, 0)).toEqual([row('google', 30)]);
    expect(settledTop([], 10, 0)).toEqual([]);
  });

  it("reads at least 20 rows a bucket, and twice the list's length for longer lists", () => {
    expect(topRowsPerBucket(1)).toBe(20);
    expect(topRowsPerBucket(10)).toBe(20);
    expect(topRowsPerBucket(100)).toBe(200);
  });

  it('orders values by their UTF-8 bytes, as the binary collations do, not by UTF-16 code units', () => {
    // U+FF5A is EF BD 9A and U+1F600 is F0 9F 98 80 in UTF-8; in UTF-16 the emoji's D83D comes first.
    expect(['\u{1F600}', '\uFF5A', 'b', 'a'].sort(byBytes)).toEqual(['a', 'b', '\uFF5A', '\u{1F600}']);
    expect(['\u{1F600}', '\uFF5A'].sort()).toEqual(['\u{1F600}', '\uFF5A']);
  });
});
