/** How the benchmark compares a report body with its raw computation. */

/**
 * Visitor counts over more than a day may be a HyperLogLog estimate (SPEC §1, issue #10): a
 * number under a key naming visitors agrees when within 1 % of the exact count. The figures
 * computed from such a count move with it:
 * - engagement's `returning_visitors` (visitors − new, new counted exactly) and
 *   `new_visitors` by up to 1 % of the visitors (new + returning), and `returning_share` by
 *   up to 100 × 0.01 / 0.99 percentage points;
 * - overview's `change.visitors` (current / previous − 1, in %) by up to 1.01 / 0.99 − 1 of
 *   100 + change.
 * Each of those also allows the 0.01 of its rounding. Every other value must be identical.
 */
const ESTIMATED = /visitors$/;
const HLL_RELATIVE_ERROR = 0.01;
const ROUNDING = 0.01;

/**
 * How far an estimated figure may lie from the exact one `b` at path `at` (`parent`: the
 * exact object holding it), or undefined when it must be identical.
 */
function allowance(at: string, b: number, parent: Record<string, unknown> | undefined): number | undefined {
  const e = HLL_RELATIVE_ERROR;
  if (/\.change\.visitors$/.test(at)) return ((1 + e) / (1 - e) - 1) * Math.abs(100 + b) + ROUNDING;
  if (/returning_share$/.test(at)) return (100 * e) / (1 - e) + ROUNDING;
  if (/returning_visitors\.(new|returning)_visitors$/.test(at) && parent) {
    return (Number(parent.new_visitors) + Number(parent.returning_visitors)) * e;
  }
  if (ESTIMATED.test(at)) return Math.abs(b) * e;
  return undefined;
}

/** The first path at which two JSON values differ, or undefined when they agree. */
export function firstDifference(
  a: unknown,
  b: unknown,
  at = '$',
  parent?: Record<string, unknown>,
): string | undefined {
  if (a === b) return undefined;
  if (typeof a === 'number' && typeof b === 'number') {
    // b is the raw side: the exact figure.
    const allowed = allowance(at, b, parent);
    if (allowed !== undefined && Math.abs(a - b) <= allowed) return undefined;
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
    const d = firstDifference(ao[key], bo[key], `${at}.${key}`, bo);
    if (d) return d;
  }
  return undefined;
}
