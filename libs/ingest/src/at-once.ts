/**
 * Runs `work` on each item, at most `width` at a time, in the items' order. After a failure no
 * further item starts; the ones under way finish (each commits or rolls back its own
 * transaction) before the first failure is thrown.
 */
export async function eachAtOnce<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, worker));
  if (failure) throw failure.error;
}

/**
 * Shares `items` out over at most `groups` groups of about equal `weight` (the heaviest item
 * first, each into the lightest group so far), keeping the items' order within each group.
 */
export function shareOut<T>(items: readonly T[], groups: number, weight: (item: T) => number): T[][] {
  const shares = Array.from({ length: Math.max(1, Math.min(groups, items.length)) }, () => ({
    weight: 0,
    members: [] as number[],
  }));
  const heaviestFirst = items.map((item, index) => ({ index, weight: weight(item) }));
  heaviestFirst.sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { index, weight: w } of heaviestFirst) {
    const lightest = shares.reduce((min, share) => (share.weight < min.weight ? share : min));
    lightest.weight += w;
    lightest.members.push(index);
  }
  return shares
    .filter((share) => share.members.length > 0)
    .map((share) => share.members.sort((a, b) => a - b).map((index) => items[index]));
}
