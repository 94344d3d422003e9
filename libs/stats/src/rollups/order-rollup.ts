import type { SqlDialect } from '@app/db/dialect';
import { CompiledQuery, RawBuilder, sql, SqlBool } from 'kysely';
import { itemMetrics, orderMetrics } from '../sql/metrics';

/**
 * The order rollups (migration 1765800000000). An order, its items and its ts never change once
 * stored, and neither depends on a session, so `import` adds each batch's new orders to them in
 * the batch's own transaction: they are never behind the raw tables and need no tail.
 *
 * - `order_rollups`: per site and 15-minute UTC bucket of the order ts, the order metrics
 *   (orders, revenue, items sold): e-commerce totals and revenue by local day.
 * - `item_rollups`, `item_day_rollups`: per site, bucket (15 minutes; UTC day) and sku, the
 *   item metrics (quantity, revenue, distinct orders): top products.
 */
export type OrderRollupTable = 'order_rollups' | 'item_rollups' | 'item_day_rollups';

/** The columns each rollup stores after its key, in the order the SELECTs below give them. */
export const ORDER_ROLLUP_COLUMNS: Record<OrderRollupTable, { keys: string[]; sums: string[] }> = {
  order_rollups: { keys: ['site_id', 'bucket'], sums: ['orders', 'revenue', 'items'] },
  item_rollups: { keys: ['site_id', 'bucket', 'sku'], sums: ['quantity', 'revenue', 'orders'] },
  item_day_rollups: { keys: ['site_id', 'bucket', 'sku'], sums: ['quantity', 'revenue', 'orders'] },
};

/** Which orders a rollup SELECT reads: every stored order, or these of one site. */
export type OrderSelection = { siteId: number; orderIds: readonly string[] } | 'all';

/** The selected orders of one site (alias `o`). */
function ofSelection(orders: OrderSelection): RawBuilder<SqlBool> {
  if (orders === 'all') return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(o.site_id = ${orders.siteId} AND o.order_id IN (${sql.join(orders.orderIds)}))`;
}

/**
 * The rows of `table` for the selected orders, keys then sums, computed with the report's own
 * order and item metrics (sql/metrics.ts): what `import` adds, and what the migration fills
 * the rollups with.
 */
export function orderRollupSelect(
  d: SqlDialect,
  table: OrderRollupTable,
  orders: OrderSelection,
): CompiledQuery {
  if (table === 'order_rollups') {
    const bucket = sql.raw<Date>(d.floorToQuarterHour('o.ts'));
    const m = orderMetrics('o');
    return d.builder
      .selectFrom('orders as o')
      .select(['o.site_id', bucket.as('b'), m.orders.as('n'), m.revenue.as('r'), m.itemsSold.as('q')])
      .$if(orders !== 'all', (q) => q.where(ofSelection(orders)))
      .groupBy(['o.site_id', bucket])
      .compile();
  }
  const bucket = sql.raw<Date>(
    table === 'item_rollups' ? d.floorToQuarterHour('o.ts') : d.floorToUtcDay('o.ts'),
  );
  const m = itemMetrics('i');
  // Aliases other than the rollup's column names: ON DUPLICATE KEY UPDATE must not see them.
  return d.builder
    .selectFrom('orders as o')
    .innerJoin('order_items as i', (j) =>
      j.onRef('i.site_id', '=', 'o.site_id').onRef('i.order_id', '=', 'o.order_id'),
    )
    .select(['o.site_id', bucket.as('b'), 'i.sku', m.quantity.as('q'), m.revenue.as('r'), m.orders.as('n')])
    .$if(orders !== 'all', (q) => q.where(ofSelection(orders)))
    .groupBy(['o.site_id', bucket, 'i.sku'])
    .compile();
}

/** The SQL that adds the selected orders to `table` (rows with the same key are added to). */
export function addToOrderRollup(
  d: SqlDialect,
  table: OrderRollupTable,
  orders: OrderSelection,
): { sql: string; parameters: readonly unknown[] } {
  const select = orderRollupSelect(d, table, orders);
  const { keys, sums } = ORDER_ROLLUP_COLUMNS[table];
  return { sql: d.upsertAddSelect(table, keys, sums, select.sql), parameters: select.parameters };
}
