import { averageOrderValue, buckets, money, rate, reportMeta, StatsQuery } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { EcommerceQueryDto } from './dto/ecommerce-query.dto';
import { EcommerceResponseDto, RevenueDayDto } from './dto/ecommerce-response.dto';
import { EcommerceQueries, RevenueDayRow } from './ecommerce.queries';

@Injectable()
export class EcommerceService {
  constructor(private readonly queries: EcommerceQueries) {}

  async report(query: StatsQuery, params: Pick<EcommerceQueryDto, 'limit'>): Promise<EcommerceResponseDto> {
    const [{ totals, days }, purchasing, products] = await Promise.all([
      this.queries.totalsAndDays(query),
      this.queries.purchasingSessions(query),
      this.queries.topProducts(query, params.limit),
    ]);
    const orders = Number(totals.orders);
    const sessions = Number(purchasing.sessions);
    const purchasingSessions = Number(purchasing.purchasing_sessions);
    return {
      data: {
        currency: query.site.currency,
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
          buckets(query.range, 'day').map((b) => b.label),
          days,
        ),
      },
      meta: reportMeta(query),
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
