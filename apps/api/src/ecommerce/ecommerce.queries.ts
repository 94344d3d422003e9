import {
  Bucket,
  buckets,
  decideTable,
  itemMetrics,
  itemRollupMetrics,
  orderRollupMetrics,
  orderRollupsMayAnswer,
  PageComplement,
  ROLLUP_BUCKET_MS,
  rowLess,
  rollupParts,
  localDateSql,
  orderMetrics,
  ReportDb,
  ReportStatement,
  sessionMetrics,
  sessionsSource,
  sessionPagesComplement,
  sessionPurchased,
  sharedStatements,
  StatsQuery,
  where,
  metricOut,
} from '@app/stats';
import { tableWithIndexMarker, type SqlDialect } from '@app/db';
import { Injectable } from '@nestjs/common';
import { sql, SqlBool } from 'kysely';

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

/** A sku's first quarter hour with an order in the range, as the engine returns it. */
export interface FirstQuarter {
  sku: string;
  b: Date | string;
  e: Date | string;
}

export interface RevenueDayRow {
  day: string;
  revenue: Decimal;
  orders: Count;
}

/** A day's row of orderTotalsByDay: the day's figures and the range's totals. */
export interface OrderDayTotalsRow extends RevenueDayRow {
  total_revenue: Decimal;
  total_orders: Count;
  total_items_sold: Count;
}

/** The SQL behind GET /sites/{id}/ecommerce; every sum of money is a DECIMAL sum in SQL. */
/**
 * The purchasing sessions of purchasingSessionsByRollup: purchase_rollups over the range plus
 * queuedPurchases.
 */
function purchasersByRollup(d: SqlDialect, query: StatsQuery) {
  const rolledUp = d.builder
    .selectFrom('purchase_rollups as r')
    .select(sql<Count>`COALESCE(SUM(r.sessions), 0)`.as('n'))
    .where(where.orderRollups(query, 'r'));
  return d.builder.selectNoFrom(
    sql<Count>`(${rolledUp}) + (${queuedPurchases(d, query)})`.as('purchasing_sessions'),
  );
}

/**
 * Of the sessions queued for aggregation that the query selects (their row, as derived, starts
 * in the range), whether each holds an order now minus whether it did when derived
 * (`purchased`): what a count of derived rows' `purchased` lacks. The queued sessions are few:
 * the join starts from them (CROSS JOIN keeps that order on SQLite), each read by key from what
 * sessionsSource reads (under `page==` one path whose rows are current, its row under the path).
 */
function queuedPurchases(d: SqlDialect, query: StatsQuery) {
  const source = sessionsSource(query, 's');
  return d.builder
    .selectFrom('dirty_sessions as q')
    .crossJoin(source.from as 'sessions as s')
    .select(
      sql<Count>`COALESCE(SUM(CASE WHEN ${sessionPurchased('s')} THEN 1 ELSE 0 END - s.purchased), 0)`.as(
        'n',
      ),
    )
    .whereRef('s.site_id', '=', 'q.site_id')
    .whereRef('s.session_id', '=', 'q.session_id')
    .where('q.site_id', '=', query.site.id)
    .where(where.sessions(query, 's', source));
}

export const ecommerceStatements = {
  /** Orders whose own ts is in the range: their count, revenue and item quantities. */
  orderTotals(query: StatsQuery): ReportStatement<OrderTotalsRow> {
    const source = orderSource(query);
    return (d) =>
      d.builder
        .selectFrom(source.table)
        .select([
          source.m.orders.as('orders'),
          metricOut(d, 'revenue', source.m.revenue).as('revenue'),
          source.m.itemsSold.as('items_sold'),
        ])
        .where(source.where)
        .compile();
  },

  /** Sessions that started in the range, and those of them that contain an order. */
  purchasingSessions(query: StatsQuery): ReportStatement<PurchasingRow> {
    decideTable(query, 'sessions');
    return (d) => {
      const source = sessionsSource(query, 's');
      return d.builder
        .selectFrom(source.from as 'sessions as s')
        .select([
          sessionMetrics('s').sessions.as('sessions'),
          sql<Count>`COALESCE(SUM(${sessionPurchased('s')}), 0)`.as('purchasing_sessions'),
        ])
        .where(where.sessions(query, 's', source))
        .compile();
    };
  },

  /**
   * The same count of purchasing sessions, read from the orders instead of one lookup per
   * session of the range: the sessions of the range with an order stamped at or after the
   * range start (every order of a derived session is stamped at or after its start), plus the
   * sessions queued for aggregation whose row starts in the range while all their orders are
   * stamped before it (a late, earlier purchase the row does not know yet). The count is exact,
   * and costs the range's orders instead of its sessions.
   */
  purchasingSessionsByOrders(query: StatsQuery): ReportStatement<{ purchasing_sessions: Count }> {
    return (d) => {
      const start = query.range.startUtc;
      const ordered = sql`SELECT DISTINCT po.site_id, po.session_id FROM orders po WHERE po.site_id = ${query.site.id} AND po.ts >= ${start}`;
      const orderedSessions = d.builder.selectFrom(sql`(${ordered})`.as('po'));
      // Under page== rows that are current each session's row there answers alone (its start
      // and the conditions); otherwise each session's row is read by key and tested.
      const byPageRow = where.sessionOfRowByKey(query, 'po');
      const withOrders =
        byPageRow === undefined
          ? orderedSessions
              .innerJoin('sessions as s', (join) =>
                join.on(sql<SqlBool>`s.site_id = po.site_id AND s.session_id = po.session_id`),
              )
              .select(sql<Count>`COUNT(*)`.as('n'))
              .where(where.sessions(query, 's'))
          : orderedSessions.select(sql<Count>`COUNT(*)`.as('n')).where(byPageRow);
      // The queued sessions are few: the join starts from them (CROSS JOIN keeps that order on
      // SQLite, whose planner would otherwise walk the range's sessions and scan the orders of
      // the range for each), and a session's last order is one lookup by session.
      const lastOrder = sql`(SELECT MAX(po.ts) FROM ${sql.raw(tableWithIndexMarker('orders', 'po', 'ix_orders_site_session'))} WHERE po.site_id = s.site_id AND po.session_id = s.session_id)`;
      const queuedEarlier = d.builder
        .selectFrom('dirty_sessions as q')
        .crossJoin('sessions as s')
        .select(sql<Count>`COUNT(*)`.as('n'))
        .whereRef('s.site_id', '=', 'q.site_id')
        .whereRef('s.session_id', '=', 'q.session_id')
        .where('q.site_id', '=', query.site.id)
        .where(where.queuedSessions(query, 's'))
        .where(sql<SqlBool>`${lastOrder} < ${start}`);
      return d.builder
        .selectNoFrom(sql<Count>`(${withOrders}) + (${queuedEarlier})`.as('purchasing_sessions'))
        .compile();
    };
  },

  /**
   * The same count from purchase_rollups (derived sessions that held an order when derived,
   * by bucket of their start), plus, for the sessions queued for aggregation whose row starts
   * in the range, whether they hold an order now minus whether the rollup counted them
   * (sessions.purchased). Exact whatever `aggregate` has done.
   */
  purchasingSessionsByRollup(query: StatsQuery): ReportStatement<{ purchasing_sessions: Count }> {
    return (d) => purchasersByRollup(d, query).compile();
  },

  /**
   * The purchasing sessions under `page!=` one path whose session_pages rows are current
   * (`without`: sessionPagesComplement): the site's (purchasingSessionsByRollup) less the path's,
   * in one statement. The path's are its rows' `purchased` (their session's, as derived) plus,
   * for its queued sessions, whether they hold an order now minus that; a session that gains an
   * order is queued by the import of its hit, so a row of a session not queued is current. A
   * session either has a pageview of the path or not, so the count is the range's less the
   * path's, without testing each ordered session of the range for a row under the path.
   */
  purchasingSessionsLessPage(without: PageComplement): ReportStatement<{ purchasing_sessions: Count }> {
    return (d) => {
      const source = sessionsSource(without.page, 's');
      const rows = d.builder
        .selectFrom(source.from as 'sessions as s')
        .select(sql<Count>`COALESCE(SUM(s.purchased), 0)`.as('n'))
        .where(where.sessions(without.page, 's', source));
      const page = d.builder.selectNoFrom(
        sql<Count>`(${rows}) + (${queuedPurchases(d, without.page)})`.as('purchasing_sessions'),
      );
      return rowLess<{ purchasing_sessions: Count }>(
        ['purchasing_sessions'],
        purchasersByRollup(d, without.site),
        page,
      ).compile(d.builder);
    };
  },

  /**
   * topProducts from the item rollups: the range's whole UTC days from item_day_rollups (by UTC
   * day: import writes them in SQL, which knows no time zone rules), the quarter hours on either
   * side from item_rollups; the names come from firstQuarters and namesAt. Each part is summed
   * by sku before the union, so that MariaDB's temporary table of the union holds a row per sku
   * and part, not one per sku and day (its in-memory rows keep the sku at its full width): at
   * 10M, 29 days of 200 skus, 7.7 -> 5.2 ms (BENCHMARKS.md run AQ).
   */
  topProductTotals(query: StatsQuery, limit: number): ReportStatement<Omit<TopProductRow, 'name'>> {
    return (d) => {
      const m = itemRollupMetrics('r');
      const parts = rollupParts(query, 'item_rollups', 'item_day_rollups', { zone: 'UTC' }).map(
        ({ table, query: part }) =>
          sql`SELECT r.sku, ${m.quantity} AS quantity, ${m.revenue} AS revenue, ${m.orders} AS orders
    FROM ${sql.table(table)} r WHERE ${where.orderRollups(part, 'r')} GROUP BY r.sku`,
      );
      return d.builder
        .selectFrom(sql`(${sql.join(parts, sql` UNION ALL `)})`.as('r'))
        .select([
          sql.ref<string>('r.sku').as('sku'),
          m.quantity.as('quantity'),
          m.revenue.as('sum_revenue'),
          metricOut(d, 'revenue', m.revenue).as('revenue'),
          m.orders.as('orders'),
        ])
        .groupBy(sql.ref('r.sku'))
        .orderBy('sum_revenue', 'desc')
        .orderBy(sql.ref('r.sku'), 'asc')
        .limit(limit)
        .compile();
    };
  },

  /**
   * The first quarter hour in the range with an order listing each of `skus`: one lookup per
   * sku in item_rollups' index by (site_id, sku, bucket). `[b, e)`, in the engine's own
   * datetime form, to be bound again; b is null for a sku without orders in the range.
   */
  firstQuarters(query: StatsQuery, skus: readonly string[]): ReportStatement<FirstQuarter> {
    return (d) => {
      const { startUtc, endUtc } = query.range;
      const rollup = sql.raw(d.tableWithIndex('item_rollups', 'r', 'ix_item_rollups_sku'));
      const first = (sku: string) =>
        sql<Date>`(SELECT MIN(r.bucket) FROM ${rollup} WHERE r.site_id = ${query.site.id} AND r.sku = ${sku} AND r.bucket >= ${startUtc} AND r.bucket < ${endUtc})`;
      const rows = skus.map((sku) =>
        d.builder.selectNoFrom([
          sql<string>`${sku}`.as('sku'),
          first(sku).as('b'),
          d.addSeconds(first(sku), sql.lit(ROLLUP_BUCKET_MS / 1000)).as('e'),
        ]),
      );
      return rows.reduce((all, row) => all.unionAll(row)).compile();
    };
  },

  /**
   * The name of each sku from its line in the first of the range's orders listing it (earliest
   * order ts, then import order of the order's hit, then line number), looking only at the
   * orders of its first quarter hour (firstQuarters): a few orders per sku, not the range's.
   */
  namesAt(
    query: StatsQuery,
    firsts: readonly FirstQuarter[],
  ): ReportStatement<{ sku: string; name: string | null }> {
    return (d) => {
      const within = (f: FirstQuarter) => sql<SqlBool>`(o.ts >= ${f.b} AND o.ts < ${f.e})`;
      const ranked = d.builder
        .selectFrom('orders as o')
        .innerJoin('order_items as i', (j) =>
          j.onRef('i.site_id', '=', 'o.site_id').onRef('i.order_id', '=', 'o.order_id'),
        )
        .innerJoin('hits as h', (j) =>
          j.onRef('h.site_id', '=', 'o.site_id').onRef('h.hit_id', '=', 'o.hit_id'),
        )
        .select([
          'i.sku',
          'i.name',
          sql<number>`ROW_NUMBER() OVER (PARTITION BY i.sku ORDER BY o.ts, h.seq, i.line_no)`.as('rn'),
        ])
        .where('o.site_id', '=', query.site.id)
        // The quarter hours alone first, so that the orders are read by (site_id, ts) ranges.
        .where(sql<SqlBool>`(${sql.join(firsts.map(within), sql` OR `)})`)
        .where(
          sql<SqlBool>`(${sql.join(
            firsts.map((f) => sql`(i.sku = ${f.sku} AND ${within(f)})`),
            sql` OR `,
          )})`,
        )
        .as('f');
      return d.builder.selectFrom(ranked).select(['f.sku', 'f.name']).where('f.rn', '=', 1).compile();
    };
  },

  /**
   * The `limit` skus with the most item revenue over the range's orders, ties by sku, each
   * named after its line in the first such order (earliest order ts, then import order of the
   * order's hit, then line number).
   *
   * The range's orders are read once: each sku's first order ts comes with its totals, and only
   * the `limit` skus kept are named, each from the lines of the orders at that instant (a few
   * look-ups by `ix_orders_site_ts` and the hit's key). At 1M pageviews under `page==/pricing`
   * (8,823 orders) the orders read twice and every line's hit looked up for the names took
   * 0.20–0.23 s, this 0.10–0.15 s (BENCHMARKS.md run BX).
   */
  topProducts(query: StatsQuery, limit: number): ReportStatement<TopProductRow> {
    decideTable(query, 'orders');
    return (d) => {
      const m = itemMetrics('i');
      // The selected orders first: joined to their lines in one statement, MariaDB tested an
      // order's session once for each of its lines (148,409 look-ups for 84,561 orders at 10M
      // under page==/pricing; the statement 0.84 -> 0.71 s by hand, BENCHMARKS.md run BX).
      const selected = d.builder
        .selectFrom('orders as o')
        .select(['o.site_id', 'o.order_id', 'o.ts'])
        .where(where.orders(query, 'o'))
        .as('o');
      const totals = d.builder
        .selectFrom(selected)
        .innerJoin('order_items as i', (j) =>
          j.onRef('i.site_id', '=', 'o.site_id').onRef('i.order_id', '=', 'o.order_id'),
        )
        .select([
          'i.sku',
          m.quantity.as('quantity'),
          m.revenue.as('revenue'),
          m.orders.as('orders'),
          sql<Date>`MIN(o.ts)`.as('first_ts'),
        ])
        .groupBy('i.sku')
        .orderBy('revenue', 'desc')
        .orderBy('i.sku', 'asc')
        .limit(limit)
        .as('t');
      // The sku's line in the orders at its first order ts, by the import order of their hits,
      // then line number.
      const firstName = sql<string | null>`(SELECT fi.name FROM orders fo
        JOIN order_items fi ON fi.site_id = fo.site_id AND fi.order_id = fo.order_id AND fi.sku = t.sku
        JOIN hits fh ON fh.site_id = fo.site_id AND fh.hit_id = fo.hit_id
        WHERE fo.site_id = ${query.site.id} AND fo.ts = t.first_ts
        ORDER BY fh.seq, fi.line_no LIMIT 1)`;
      return d.builder
        .selectFrom(totals)
        .select([
          't.sku',
          firstName.as('name'),
          't.quantity',
          metricOut(d, 'revenue', sql.ref('t.revenue')).as('revenue'),
          't.orders',
        ])
        .orderBy('t.revenue', 'desc')
        .orderBy('t.sku', 'asc')
        .compile();
    };
  },

  /**
   * orderTotals and revenueByDay in one statement where both read the orders (under conditions
   * the order rollups do not answer): each day's row as revenueByDay's, and the range's totals on
   * every row, summed over its days (each order lies in one local day of the range). Each
   * selected order is read and tested once instead of twice. No row when the range has no order.
   */
  orderTotalsByDay(query: StatsQuery): ReportStatement<OrderDayTotalsRow> {
    decideTable(query, 'orders');
    return (d) => {
      const m = orderMetrics('o');
      const days = d.builder
        .selectFrom('orders as o')
        .select([
          localDateSql(d, sql.ref('o.ts'), query.range).as('day'),
          m.revenue.as('revenue'),
          m.orders.as('orders'),
          m.itemsSold.as('items_sold'),
        ])
        .where(where.orders(query, 'o'))
        .groupBy('day')
        .as('x');
      return d.builder
        .selectFrom(days)
        .select([
          'x.day',
          metricOut(d, 'revenue', sql.ref('x.revenue')).as('revenue'),
          'x.orders',
          metricOut(d, 'revenue', sql`SUM(x.revenue) OVER ()`).as('total_revenue'),
          sql<Count>`SUM(x.orders) OVER ()`.as('total_orders'),
          sql<Count>`SUM(x.items_sold) OVER ()`.as('total_items_sold'),
        ])
        .compile();
    };
  },

  /** Revenue and orders per local calendar day of the report timezone; days without orders are absent. */
  revenueByDay(query: StatsQuery): ReportStatement<RevenueDayRow> {
    // A quarter hour lies in one local day in every zone in use (rollupCovers).
    const source = orderSource(query, buckets(query.range, 'day'));
    return (d) =>
      d.builder
        .selectFrom(source.table)
        .select([
          localDateSql(d, source.time, query.range).as('day'),
          metricOut(d, 'revenue', source.m.revenue).as('revenue'),
          source.m.orders.as('orders'),
        ])
        .where(source.where)
        .groupBy('day')
        .compile();
  },
};

/**
 * Where a statement reads the order metrics of the query's range: order_rollups when they
 * answer (orderRollupsMayAnswer, over whole quarter hours of `buckets` too), else the orders.
 */
function orderSource(query: StatsQuery, reportBuckets?: Bucket[]) {
  if (orderRollupsMayAnswer(query, reportBuckets)) {
    return {
      table: 'order_rollups as r' as 'orders as o',
      m: orderRollupMetrics('r'),
      time: sql.ref('r.bucket'),
      where: where.orderRollups(query, 'r'),
    };
  }
  decideTable(query, 'orders');
  return {
    table: 'orders as o' as const,
    m: orderMetrics('o'),
    time: sql.ref('o.ts'),
    where: where.orders(query, 'o'),
  };
}

@Injectable()
export class EcommerceQueries {
  constructor(private readonly db: ReportDb) {}

  async orderTotals(query: StatsQuery): Promise<OrderTotalsRow> {
    return (await this.db.run(ecommerceStatements.orderTotals(query)))[0];
  }

  /**
   * Sessions of the range and the purchasing ones. The raw path (the parity reference) looks
   * at every session; otherwise the sessions are counted like every session total and the
   * purchasing ones from the range's orders.
   */
  async purchasingSessions(query: StatsQuery): Promise<PurchasingRow> {
    if (query.tables === 'raw') return (await this.db.run(ecommerceStatements.purchasingSessions(query)))[0];
    // page!= one path: the site's less the path's (sessionPagesComplement), as its sessions.
    const without = sessionPagesComplement(query, { metrics: ['sessions'] });
    const [[totals], [purchasing]] = await Promise.all([
      this.db.run(sharedStatements.sessionTotals(query, ['sessions'])),
      this.db.run(
        orderRollupsMayAnswer(query)
          ? ecommerceStatements.purchasingSessionsByRollup(query)
          : without !== undefined && orderRollupsMayAnswer(without.site)
            ? ecommerceStatements.purchasingSessionsLessPage(without)
            : ecommerceStatements.purchasingSessionsByOrders(query),
      ),
    ]);
    return { sessions: totals.sessions, purchasing_sessions: purchasing.purchasing_sessions };
  }

  async topProducts(query: StatsQuery, limit: number): Promise<TopProductRow[]> {
    if (!orderRollupsMayAnswer(query)) return this.db.run(ecommerceStatements.topProducts(query, limit));
    const top = await this.db.run(ecommerceStatements.topProductTotals(query, limit));
    if (top.length === 0) return [];
    const firsts = await this.db.run(
      ecommerceStatements.firstQuarters(
        query,
        top.map((p) => p.sku),
      ),
    );
    const names = new Map(
      (await this.db.run(ecommerceStatements.namesAt(query, firsts))).map((n) => [n.sku, n.name]),
    );
    return top.map((p) => ({
      sku: p.sku,
      name: names.get(p.sku) ?? null,
      quantity: p.quantity,
      revenue: p.revenue,
      orders: p.orders,
    }));
  }

  /**
   * The range's order totals and its revenue by day: in one statement where both would read the
   * orders (orderTotalsByDay), otherwise each from its own, concurrently. The raw path (the
   * parity reference) keeps the two statements.
   */
  async totalsAndDays(query: StatsQuery): Promise<{ totals: OrderTotalsRow; days: RevenueDayRow[] }> {
    const ordersOnly =
      !orderRollupsMayAnswer(query) && !orderRollupsMayAnswer(query, buckets(query.range, 'day'));
    if (ordersOnly && query.tables !== 'raw') {
      const rows = await this.db.run(ecommerceStatements.orderTotalsByDay(query));
      const first = rows[0];
      return {
        totals:
          first === undefined
            ? { orders: 0, revenue: '0', items_sold: 0 }
            : {
                orders: first.total_orders,
                revenue: first.total_revenue,
                items_sold: first.total_items_sold,
              },
        days: rows.map((r) => ({ day: r.day, revenue: r.revenue, orders: r.orders })),
      };
    }
    const [totals, days] = await Promise.all([this.orderTotals(query), this.revenueByDay(query)]);
    return { totals, days };
  }

  revenueByDay(query: StatsQuery): Promise<RevenueDayRow[]> {
    return this.db.run(ecommerceStatements.revenueByDay(query));
  }
}
