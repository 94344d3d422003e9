import { round2 } from '@app/stats/definitions';

/** % change from `previous` to `current`, 2 decimals; `null` when there is nothing to compare with. */
export function percentChange(current: number, previous: number): number | null {
  return previous === 0 ? null : round2(((current - previous) / previous) * 100);
}

/** A mean rounded to 2 decimals; 0 over nothing. `sum` may be a DECIMAL string from the driver. */
export function average(sum: number | string, count: number): number {
  return count === 0 ? 0 : round2(Number(sum) / count);
}
