import { eachAtOnce, shareOut } from './at-once';

describe('eachAtOnce', () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('runs every item, never more than `width` at once', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await eachAtOnce([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      running++;
      most = Math.max(most, running);
      await tick();
      seen.push(n);
      running--;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('runs one at a time, in order, with width 1', async () => {
    const seen: number[] = [];
    await eachAtOnce([3, 1, 2], 1, async (n) => {
      await tick();
      seen.push(n);
    });
    expect(seen).toEqual([3, 1, 2]);
  });

  it('starts nothing after a failure, lets the items under way finish, then throws it', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const run = eachAtOnce([1, 2, 3, 4, 5], 2, async (n) => {
      started.push(n);
      await tick();
      if (n === 1) throw new Error('one failed');
      await tick();
      finished.push(n);
    });
    await expect(run).rejects.toThrow('one failed');
    expect(started).toEqual([1, 2]);
    expect(finished).toEqual([2]);
  });

  it('does nothing for no items', async () => {
    const work = jest.fn();
    await eachAtOnce([], 4, work);
    expect(work).not.toHaveBeenCalled();
  });
});

describe('shareOut', () => {
  it('shares the heaviest first, each into the lightest group, keeping the order within a group', () => {
    const items = [
      ['a', 10],
      ['b', 1],
      ['c', 4],
      ['d', 3],
      ['e', 2],
      ['f', 1],
    ] as const;
    const groups = shareOut(items, 3, ([, w]) => w).map((g) => g.map(([name]) => name));
    // a (10) alone; c (4), d (3), e (2), b (1), f (1) over the two others: c+b+f = 6, d+e = 5.
    expect(groups).toEqual([['a'], ['b', 'c', 'f'], ['d', 'e']]);
  });

  it('makes no more groups than items, and one group of everything for width 1', () => {
    expect(shareOut([1, 2], 4, () => 1)).toEqual([[1], [2]]);
    expect(shareOut([3, 1, 2], 1, (n) => n)).toEqual([[3, 1, 2]]);
    expect(shareOut([], 3, () => 1)).toEqual([]);
  });
});
