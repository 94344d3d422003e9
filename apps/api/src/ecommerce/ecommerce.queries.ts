import {
  itemRevenueSql,
  localDateSql,
  orderRevenueSql,
  ordersInRangeSql,
  ReportDb,
  ReportRange,
  sessionPurchasedSql,
} from '@app/stats';
import { Injectable } from '@nestjs/common';

type Count = number | string;
/** A DECIMAL as mysql2 returns it: a string such as "100.00". */
type Decimal = string;

export interface OrderTotalsRow {
  orders: Count;
  revenue: Decimal;
  items_sold: Count;
}

export interface PurchasingRow {
  sessions: Count;
  purchasing_sessions: Count;
}

export interface TopProductRow {
  sku: string;
  name: string | null;
  quantity: Count;
  revenue: Decimal;
  orders: Count;
}

export interface RevenueDayRow {
  day: string;
  revenue: Decimal;
  orders: Count;
}

/** The SQL behind GET /sites/{id}/ecommerce; every sum of money is a DECIMAL sum in SQL. */
@Injectable()
export class EcommerceQueries {
  constructor(private readonly db: ReportDb) {}

  /** Orders whose own ts is in the range: their count, revenue and item quantities. */
  async orderTotals(siteId: number, range: ReportRange): Promise<OrderTotalsRow> {
    const inRange = ordersInRangeSql('o', siteId, range);
    const rows = await this.db.select<OrderTotalsRow>(
      `SELECT COUNT(*) AS orders, ${orderRevenueSql('o')} AS revenue,
              COALESCE(SUM((SELECT SUM(i.quantity) FROM order_items i
                              WHERE i.site_id = o.site_id AND i.order_id = o.order_id)), 0) AS items_sold
         FROM orders o
        WHERE ${inRange.sql}`,
      inRange.params,
    );
    return rows[0];
  }

  /** Sessions that started in the range, and those of them that contain an order. */
  async purchasingSessions(siteId: number, range: ReportRange): Promise<PurchasingRow> {
    const rows = await this.db.select<PurchasingRow>(
      `SELECT COUNT(*) AS sessions, COALESCE(SUM(${sessionPurchasedSql('s')}), 0) AS purchasing_sessions
         FROM sessions s
        WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?`,
      [siteId, range.startUtc, range.endUtc],
    );
    return rows[0];
  }

  /**
   * The `limit` skus with the most item revenue over the range's orders, ties by sku, each
   * named after its line in the first such order (earliest order ts, then import order of the
   * order's hit, then line number).
   */
  topProducts(siteId: number, range: ReportRange, limit: number): Promise<TopProductRow[]> {
    const totalsRange = ordersInRangeSql('o', siteId, range);
    const namesRange = ordersInRangeSql('o', siteId, range);
    return this.db.select<TopProductRow>(
      `SELECT t.sku, f.name, t.quantity, t.revenue, t.orders
         FROM (
           SELECT i.sku, SUM(i.quantity) AS quantity, SUM(${itemRevenueSql('i')}) AS revenue,
                  COUNT(DISTINCT i.order_id) AS orders
             FROM orders o
             JOIN order_items i ON i.site_id = o.site_id AND i.order_id = o.order_id
            WHERE ${totalsRange.sql}
            GROUP BY i.sku
            ORDER BY revenue DESC, i.sku ASC
            LIMIT ?
         ) t
         JOIN (
           SELECT i.sku, i.name,
                  ROW_NUMBER() OVER (PARTITION BY i.sku ORDER BY o.ts, h.seq, i.line_no) AS rn
             FROM orders o
             JOIN order_items i ON i.site_id = o.site_id AND i.order_id = o.order_id
             JOIN hits h ON h.site_id = o.site_id AND h.hit_id = o.hit_id
            WHERE ${namesRange.sql}
         ) f ON f.sku = t.sku AND f.rn = 1
        ORDER BY t.revenue DESC, t.sku ASC`,
      [...totalsRange.params, limit, ...namesRange.params],
    );
  }

  /** Revenue and orders per local calendar day of the report timezone; days without orders are absent. */
  revenueByDay(siteId: number, range: ReportRange): Promise<RevenueDayRow[]> {
    const day = localDateSql(this.db.dialect, 'o.ts', range);
    const inRange = ordersInRangeSql('o', siteId, range);
    return this.db.select<RevenueDayRow>(
      `SELECT ${day.sql} AS day, ${orderRevenueSql('o')} AS revenue, COUNT(*) AS orders
         FROM orders o
        WHERE ${inRange.sql}
        GROUP BY day`,
      [...day.params, ...inRange.params],
    );
  }
}
