import { addToOrderRollup, ORDER_ROLLUP_COLUMNS, OrderRollupTable } from '@app/stats/rollups/order-rollup';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion, SqlDialect } from '../dialect';

/**
 * Orders and items by 15-minute UTC bucket of the order ts (and items by UTC day as well):
 * e-commerce read every order of the range and its items, one lookup each (1.44 s at 10M
 * pageviews, about 92k orders in 30 days). `import` adds each batch's new orders in the
 * batch's transaction (libs/stats/src/rollups/order-rollup.ts); this fills them from the
 * orders that exist.
 */
export class OrderRollups1765800000000 implements MigrationInterface {
  name = 'OrderRollups1765800000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE order_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      orders INT NOT NULL,
      revenue DECIMAL(20,2) NOT NULL,
      items BIGINT NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) ${table}`);
    for (const name of ['item_rollups', 'item_day_rollups']) {
      // By sku and bucket too: the first bucket of a top product in a range, for its name.
      const bySku = name === 'item_rollups' ? `, KEY ix_item_rollups_sku (site_id, sku, bucket)` : '';
      await q.query(`CREATE TABLE ${name} (
        site_id INT UNSIGNED NOT NULL,
        bucket DATETIME NOT NULL,
        sku VARCHAR(255) NOT NULL,
        quantity BIGINT NOT NULL,
        revenue DECIMAL(20,2) NOT NULL,
        orders INT NOT NULL,
        PRIMARY KEY (site_id, bucket, sku)${bySku}
      ) ${table}`);
    }
    await buildOrderRollups(q, dialect);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE item_day_rollups');
    await q.query('DROP TABLE item_rollups');
    await q.query('DROP TABLE order_rollups');
  }
}

/** Fills the three rollups from every stored order, as `import` would have. */
export async function buildOrderRollups(q: QueryRunner, dialect: SqlDialect): Promise<void> {
  for (const table of Object.keys(ORDER_ROLLUP_COLUMNS) as OrderRollupTable[]) {
    const statement = addToOrderRollup(dialect, table, 'all');
    await q.query(statement.sql, [...statement.parameters]);
  }
}
