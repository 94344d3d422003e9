import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { averageOrderValue, buckets, money, rate, reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { EcommerceQueryDto } from './dto/ecommerce-query.dto';
import { EcommerceReportDto, RevenueDayDto } from './dto/ecommerce-report.dto';
import { EcommerceQueries, RevenueDayRow } from './ecommerce.queries';

@Injectable()
export class EcommerceService {
  constructor(
    private readonly queries: EcommerceQueries,
    private readonly config: AppConfig,
  ) {}

  async report(site: Site, query: EcommerceQueryDto): Promise<EcommerceReportDto> {
    const range = reportRange(query, site, this.config.limits.maxRangeDays);
    const [totals, purchasing, products, days] = await Promise.all([
      this.queries.orderTotals(site.id, range),
      this.queries.purchasingSessions(site.id, range),
      this.queries.topProducts(site.id, range, query.limit),
      this.queries.revenueByDay(site.id, range),
    ]);
    const orders = Number(totals.orders);
    const sessions = Number(purchasing.sessions);
    const purchasingSessions = Number(purchasing.purchasing_sessions);
    return {
      data: {
        currency: site.currency,
        revenue: money(totals.revenue),
        orders,
        average_order_value: averageOrderValue(totals.revenue, orders),
        purchasing_sessions: purchasingSessions,
        conversion_rate: rate(purchasingSessions, sessions),
        items_sold: Number(totals.items_sold),
        top_products: products.map((p) => ({
          sku: p.sku,
          name: p.name,
          quantity: Number(p.quantity),
          revenue: money(p.revenue),
          orders: Number(p.orders),
        })),
        revenue_by_day: everyDay(
          buckets(range, 'day').map((b) => b.label),
          days,
        ),
      },
      meta: reportMeta(site.id, range),
    };
  }
}

/** One entry per day of the range, in order, with zeros where no order was placed. */
function everyDay(dates: string[], rows: RevenueDayRow[]): RevenueDayDto[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return dates.map((date) => {
    const row = byDay.get(date);
    return { date, revenue: money(row?.revenue ?? null), orders: Number(row?.orders ?? 0) };
  });
}
