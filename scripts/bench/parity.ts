/** How the benchmark compares a report body with its raw computation. */

/**
 * Visitor counts over more than a day may be a HyperLogLog estimate (SPEC §1, issue #10): a
 * number under a key naming visitors agrees when within 1 % of the exact count. Every other
 * value must be identical.
 */
const ESTIMATED = /visitors$/;
const HLL_RELATIVE_ERROR = 0.01;

/** The first path at which two JSON values differ, or undefined when they agree. */
export function firstDifference(a: unknown, b: unknown, at = '$'): string | undefined {
  if (a === b) return undefined;
  if (typeof a === 'number' && typeof b === 'number' && ESTIMATED.test(at)) {
    // b is the raw side: the exact count.
    if (Math.abs(a - b) <= Math.abs(b) * HLL_RELATIVE_ERROR) return undefined;
  }
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object')
    return `${at}: ${JSON.stringify(a)?.slice(0, 80)} ≠ ${JSON.stringify(b)?.slice(0, 80)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${at}: array ≠ object`;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at}: ${a.length} items ≠ ${b.length} items`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const key of [...keys].sort()) {
    if (!(key in ao) || !(key in bo)) return `${at}.${key}: present on one side only`;
    const d = firstDifference(ao[key], bo[key], `${at}.${key}`);
    if (d) return d;
  }
  return undefined;
}
