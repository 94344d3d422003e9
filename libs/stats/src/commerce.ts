/**
 * The e-commerce definitions of SPEC §1 ("Order", "Attribution to a date range"), in one place.
 * `orders` holds one row per (site_id, order_id): the importer keeps the first imported purchase
 * hit of an order and drops later duplicates, so no report deduplicates again. Money stays a
 * DECIMAL in SQL; mysql2 hands it over as a string, turned into a number only at the very end.
 */
import { RawBuilder, sql, SqlBool } from 'kysely';
import { col } from './sql/col';
import { siteKeysWhere } from './sql/site-keys';

/**
 * SQL condition: session `sessionAlias` (a sessions row) contains at least one order, i.e. an
 * order whose first imported hit is one of its hits. A session whose only purchase hit repeats
 * an order already seen in another session does not purchase.
 */
export const sessionPurchased = (sessionAlias: string): RawBuilder<SqlBool> =>
  sql<SqlBool>`EXISTS (SELECT 1 FROM orders po WHERE po.site_id = ${col(sessionAlias, 'site_id')} AND po.session_id = ${col(sessionAlias, 'session_id')})`;

/**
 * The same test over a batch of sessions of several sites (site id → session ids): those that
 * hold an order, as a derived table of `site_id, session_id`, read once for the batch through
 * the orders' key (site_id, session_id), one range per site. `aggregate` derives sessions with
 * it: looked up once per session (sessionPurchased), MariaDB 10.11 at times read every order of
 * the site for each session (BENCHMARKS.md run AC: the backfill's stall after a bulk import).
 */
export const purchasingSessionsAmong = (sites: ReadonlyMap<number, readonly string[]>): RawBuilder<unknown> =>
  sql`SELECT DISTINCT po.site_id, po.session_id FROM orders po WHERE ${siteKeysWhere(sites, 'po')}`;

const MONEY = /^(\d+)(?:\.(\d{1,2}))?$/;

/** A non-negative DECIMAL of at most 2 decimals (as mysql2 returns it) in integer cents, exactly. */
export function toCents(value: string | number | null | undefined): bigint {
  if (value === null || value === undefined) return 0n;
  const text = typeof value === 'number' ? value.toFixed(2) : value;
  const m = MONEY.exec(text);
  if (!m) throw new Error(`not a money amount: ${text}`);
  return BigInt(m[1]) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
}

/** Integer cents as the number with those 2 decimals (the only float step, at the very end). */
export function centsToNumber(cents: bigint): number {
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  return Number(`${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`);
}

/** A money DECIMAL from SQL as a number with 2 decimals; NULL (an empty SUM) reads 0. */
export function money(value: string | number | null | undefined): number {
  return centsToNumber(toCents(value));
}

/** Average order value: revenue / orders rounded half up to the cent, exactly; 0 without orders. */
export function averageOrderValue(revenue: string | number | null | undefined, orders: number): number {
  if (orders <= 0) return 0;
  const n = BigInt(orders);
  return centsToNumber((toCents(revenue) * 2n + n) / (2n * n));
}
