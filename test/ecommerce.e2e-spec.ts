import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ReportDb, StatsQueryParser } from '@app/stats';
import { EcommerceController } from '../apps/api/src/ecommerce/ecommerce.controller';
import { ecommerceStatements } from '../apps/api/src/ecommerce/ecommerce.queries';
import { ndjson, pageview, purchase } from './support/hits';
import { TEST_ENGINE, TestEnv } from './support/test-env';

/**
 * The shop is in Europe/Berlin, EUR. Summer time starts 2026-03-29 at 01:00Z, so the local days
 * of the range 2026-03-28..2026-03-31 are, in UTC:
 *   28: [03-27T23:00Z, 03-28T23:00Z)   29: [03-28T23:00Z, 03-29T22:00Z) (23 hours)
 *   30: [03-29T22:00Z, 03-30T22:00Z)   31: [03-30T22:00Z, 03-31T22:00Z)
 */
describe(EcommerceController.name, () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let shop: number;
  let pennies: number;
  let importRun: { code: number; stderr: string };

  const RANGE = 'from=2026-03-28&to=2026-03-31';
  const eur = { currency: 'EUR' };
  const item = (sku: string, name: string, quantity: number, price: string) => ({
    sku,
    name,
    quantity,
    price,
  });

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    shop = await env.site({ timezone: 'Europe/Berlin', currency: 'EUR', members: [user] });
    pennies = await env.site({ timezone: 'UTC', currency: 'USD', members: [user] });
    key = (await env.key(user)).key;

    const imported = await env.importHits([
      // S1 (in range): ord-1, 30.00; items B 1 × 20.00 and A 2 × 5.00.
      pageview(shop, 'S1', '2026-03-28T08:55:00Z', '/cart'),
      purchase(shop, 'S1', '2026-03-28T09:00:00Z', 'ord-1', '30.00', {
        ...eur,
        items: [item('B', 'Bag', 1, '20.00'), item('A', 'Apple', 2, '5.00')],
      }),
      // S2 (in range): a second purchase hit of ord-1, earlier ts but imported later: the same order,
      // ignored with its revenue and items; S2 contains no order of its own.
      pageview(shop, 'S2', '2026-03-28T07:59:00Z', '/cart'),
      purchase(shop, 'S2', '2026-03-28T08:00:00Z', 'ord-1', '999.00', {
        ...eur,
        items: [item('Z', 'Zed', 9, '1.00')],
      }),
      // S3: ord-2, 10.00, in the last millisecond of local day 28; items A 1 × 5.00 (a later name), D 1 × 5.00.
      purchase(shop, 'S3', '2026-03-28T22:59:59.999Z', 'ord-2', '10.00', {
        ...eur,
        items: [item('A', 'Green apple', 1, '5.00'), item('D', 'Date', 1, '5.00')],
      }),
      // S4, S5: ord-9 and ord-10 at the same instant, 2026-03-29 00:30 local (still the 28th in UTC),
      // 6.00 each with C 1 × 6.00. ord-9 is imported first, so its name wins although 'ord-10' < 'ord-9'.
      purchase(shop, 'S4', '2026-03-28T23:30:00Z', 'ord-9', '6.00', {
        ...eur,
        items: [item('C', 'Cherry', 1, '6.00')],
      }),
      purchase(shop, 'S5', '2026-03-28T23:30:00Z', 'ord-10', '6.00', {
        ...eur,
        items: [item('C', 'Cherry (renamed)', 1, '6.00')],
      }),
      // S6: ord-5, 7.25 without items, at 23:59:59.999 local summer time on the 29th.
      purchase(shop, 'S6', '2026-03-29T21:59:59.999Z', 'ord-5', '7.25', eur),
      // S7: ord-6, 15.00 at 2026-03-31 00:30 local (the 30th in UTC); sku E on two lines of one order:
      // 4 × 2.50 + 2 × 2.50 = 15.00.
      purchase(shop, 'S7', '2026-03-30T22:30:00Z', 'ord-6', '15.00', {
        ...eur,
        items: [item('E', 'Eraser', 4, '2.50'), item('E', 'Eraser', 2, '2.50')],
      }),
      // S8: ord-7 at 2026-03-27 23:59:59.999 local, before the range.
      purchase(shop, 'S8', '2026-03-27T22:59:59.999Z', 'ord-7', '100.00', {
        ...eur,
        items: [item('A', 'Apple', 10, '5.00')],
      }),
      // S9: ord-8 at 2026-04-01 00:00 local, after the range.
      purchase(shop, 'S9', '2026-03-31T22:00:00Z', 'ord-8', '100.00', eur),
      // S10 starts in range (23:50 local on the 31st); its order ord-11 (00:10 local on April 1) is after it.
      pageview(shop, 'S10', '2026-03-31T21:50:00Z', '/cart'),
      purchase(shop, 'S10', '2026-03-31T22:10:00Z', 'ord-11', '3.00', eur),
    ]);
    expect(imported.rejections).toEqual([]);

    // Through the real CLI: S11's pageview is stored, the USD purchase on the EUR shop is rejected.
    const dir = mkdtempSync(path.join(tmpdir(), 'stats-ecommerce-'));
    const file = path.join(dir, 'hits.ndjson');
    writeFileSync(
      file,
      ndjson([
        pageview(shop, 'S11', '2026-03-29T12:00:00Z', '/'),
        purchase(shop, 'S11', '2026-03-29T12:01:00Z', 'ord-12', '50.00', { currency: 'USD' }),
      ]),
    );
    importRun = await env.cli(['import', file]);
    rmSync(dir, { recursive: true, force: true });

    // 100 sessions with 10 orders of 0.10 each (half sent as strings, half as numbers), each listing
    // PENNY 1 × 0.10, and 100 sessions without orders.
    const hits: object[] = [];
    for (let s = 0; s < 100; s++) {
      for (let o = 0; o < 10; o++) {
        const n = s * 10 + o;
        hits.push(
          purchase(
            pennies,
            `p${s}`,
            `2026-05-01T10:${String(o).padStart(2, '0')}:00Z`,
            `p-${n}`,
            n % 2 ? 0.1 : '0.10',
            {
              items: [{ sku: 'PENNY', name: 'Penny sweet', quantity: 1, price: n % 2 ? 0.1 : '0.10' }],
            },
          ),
        );
      }
      hits.push(pageview(pennies, `browse${s}`, '2026-05-01T09:00:00Z', '/'));
    }
    const penniesImported = await env.importHits(hits);
    expect(penniesImported.rejections).toEqual([]);
    expect(penniesImported.orders).toBe(1000);

    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (url: string) => request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`);

  it('rejects a purchase in another currency than the site at import, naming the line, and exits 2', () => {
    expect(importRun.code).toBe(2);
    expect(importRun.stderr).toContain("line 2: currency USD differs from the site's currency EUR");
    expect(importRun.stderr).not.toContain('line 1:');
  });

  it('reports revenue, orders, AOV, purchasing sessions, items and products of the range', async () => {
    const res = await get(`/api/v1/sites/${shop}/ecommerce?${RANGE}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        currency: 'EUR',
        // ord-1 30.00 + ord-2 10.00 + ord-9 6.00 + ord-10 6.00 + ord-5 7.25 + ord-6 15.00 = 74.25 (the
        // duplicate 999.00 of ord-1, ord-7, ord-8, ord-11 and the rejected USD purchase are not in it).
        revenue: 74.25,
        orders: 6,
        // 74.25 / 6 = 12.375 → 12.38 (half up).
        average_order_value: 12.38,
        // Sessions started in range: S1–S7, S10, S11 = 9 (S8 before, S9 after). With an order:
        // S1, S3, S4, S5, S6, S7, S10 = 7 (S2's purchase hit repeats ord-1; S10's order is after the
        // range but its session started in it). 7 / 9 = 77.77…% → 77.78.
        purchasing_sessions: 7,
        conversion_rate: 77.78,
        // ord-1 2 + 1, ord-2 1 + 1, ord-9 1, ord-10 1, ord-5 0, ord-6 4 + 2 = 13.
        items_sold: 13,
        top_products: [
          // B: 1 × 20.00 in ord-1.
          { sku: 'B', name: 'Bag', quantity: 1, revenue: 20, orders: 1 },
          // A: 2 × 5.00 (ord-1) + 1 × 5.00 (ord-2) = 15.00; named after ord-1, the earlier order.
          { sku: 'A', name: 'Apple', quantity: 3, revenue: 15, orders: 2 },
          // E: 15.00 too, after A by sku; two lines of one order are one order.
          { sku: 'E', name: 'Eraser', quantity: 6, revenue: 15, orders: 1 },
          // C: 6.00 + 6.00 = 12.00, above D's 5.00 (compared as numbers, not as strings).
          { sku: 'C', name: 'Cherry', quantity: 2, revenue: 12, orders: 2 },
          { sku: 'D', name: 'Date', quantity: 1, revenue: 5, orders: 1 },
        ],
        revenue_by_day: [
          // 28: ord-1 30.00 + ord-2 10.00 (23:59:59.999 local).
          { date: '2026-03-28', revenue: 40, orders: 2 },
          // 29: ord-9 + ord-10 (00:30 local) 12.00 + ord-5 7.25 = 19.25.
          { date: '2026-03-29', revenue: 19.25, orders: 3 },
          { date: '2026-03-30', revenue: 0, orders: 0 },
          // 31: ord-6 at 00:30 local.
          { date: '2026-03-31', revenue: 15, orders: 1 },
        ],
      },
      meta: { site_id: shop, from: '2026-03-28', to: '2026-03-31', timezone: 'Europe/Berlin', filters: [] },
    });
  });

  it('puts orders on the calendar days of the timezone parameter', async () => {
    // UTC range [03-28T00:00Z, 04-01T00:00Z): ord-7 (03-27T22:59:59.999Z) stays out; ord-8 (03-31T22:00Z)
    // and ord-11 (03-31T22:10Z) come in.
    const res = await get(`/api/v1/sites/${shop}/ecommerce?${RANGE}&timezone=UTC`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      // 74.25 + 100.00 + 3.00 = 177.25 over 6 + 2 = 8 orders: 22.15625 → 22.16.
      revenue: 177.25,
      orders: 8,
      average_order_value: 22.16,
      // Sessions: S1–S7, S9, S10, S11 = 10; with an order: S1, S3–S7, S9, S10 = 8 → 80.
      purchasing_sessions: 8,
      conversion_rate: 80,
      items_sold: 13,
      revenue_by_day: [
        // 28: ord-1 30.00 + ord-2 10.00 + ord-9 6.00 + ord-10 6.00 = 52.00.
        { date: '2026-03-28', revenue: 52, orders: 4 },
        { date: '2026-03-29', revenue: 7.25, orders: 1 },
        { date: '2026-03-30', revenue: 15, orders: 1 },
        // 31: ord-8 100.00 + ord-11 3.00.
        { date: '2026-03-31', revenue: 103, orders: 2 },
      ],
    });
    expect(res.body.meta.timezone).toBe('UTC');
  });

  it('sums 1,000 orders of 0.10 to exactly 100.00, with an AOV of 0.10', async () => {
    const res = await get(`/api/v1/sites/${pennies}/ecommerce?from=2026-05-01&to=2026-05-01`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      currency: 'USD',
      revenue: 100,
      orders: 1000,
      average_order_value: 0.1,
      // 100 purchasing sessions of 200: 50 %.
      purchasing_sessions: 100,
      conversion_rate: 50,
      items_sold: 1000,
      top_products: [{ sku: 'PENNY', name: 'Penny sweet', quantity: 1000, revenue: 100, orders: 1000 }],
      revenue_by_day: [{ date: '2026-05-01', revenue: 100, orders: 1000 }],
    });
  });

  it('cuts top_products at limit, in the same order', async () => {
    const two = await get(`/api/v1/sites/${shop}/ecommerce?${RANGE}&limit=2`);
    expect(two.body.data.top_products.map((p: { sku: string }) => p.sku)).toEqual(['B', 'A']);
    const three = await get(`/api/v1/sites/${shop}/ecommerce?${RANGE}&limit=3`);
    expect(three.body.data.top_products.map((p: { sku: string }) => p.sku)).toEqual(['B', 'A', 'E']);
    const hundred = await get(`/api/v1/sites/${shop}/ecommerce?${RANGE}&limit=100`);
    expect(hundred.status).toBe(200);
    expect(hundred.body.data.top_products).toHaveLength(5);
  });

  it('names each product after its first order among the selected sessions under a filter', async () => {
    // page!=/cart leaves S1 (ord-1) and S10 out: S3–S7 have no pageview at all. Their orders in
    // the range: ord-2, ord-9, ord-10, ord-5, ord-6 = 10.00 + 6.00 + 6.00 + 7.25 + 15.00.
    const res = await get(
      `/api/v1/sites/${shop}/ecommerce?${RANGE}&filters=${encodeURIComponent('page!=/cart')}`,
    );
    expect(res.status).toBe(200);
    // Local days (Berlin): ord-2 on the 28th; ord-9, ord-10 (00:30) and ord-5 (23:59:59.999) on
    // the 29th; ord-6 (00:30) on the 31st. Items: 2 + 1 + 1 + 0 + 6.
    expect(res.body.data).toMatchObject({
      revenue: 44.25,
      orders: 5,
      average_order_value: 8.85,
      items_sold: 10,
      revenue_by_day: [
        { date: '2026-03-28', revenue: 10, orders: 1 },
        { date: '2026-03-29', revenue: 19.25, orders: 3 },
        { date: '2026-03-30', revenue: 0, orders: 0 },
        { date: '2026-03-31', revenue: 15, orders: 1 },
      ],
    });
    expect(res.body.data.top_products).toEqual([
      { sku: 'E', name: 'Eraser', quantity: 6, revenue: 15, orders: 1 },
      // ord-9 and ord-10 at one instant: ord-9 was imported first.
      { sku: 'C', name: 'Cherry', quantity: 2, revenue: 12, orders: 2 },
      // A only in ord-2 among the selected orders: its name there, not ord-1's 'Apple'.
      { sku: 'A', name: 'Green apple', quantity: 1, revenue: 5, orders: 1 },
      { sku: 'D', name: 'Date', quantity: 1, revenue: 5, orders: 1 },
    ]);
  });

  it('counts the purchasing sessions under a page condition by the start of each selected session', async () => {
    // page==/cart selects S1, S2 and S10, which started in the range. S1 (ord-1) and S10 (ord-11,
    // stamped after the range but at or after its start) purchased; S2 only repeated ord-1.
    const range = await get(
      `/api/v1/sites/${shop}/ecommerce?${RANGE}&filters=${encodeURIComponent('page==/cart')}`,
    );
    expect(range.status).toBe(200);
    // 2 / 3 = 66.67 %.
    expect(range.body.data).toMatchObject({
      revenue: 30,
      orders: 1,
      purchasing_sessions: 2,
      conversion_rate: 66.67,
    });
    // On April 1st ord-11 counts by its own ts, but S10 started on March 31st: no session of the
    // day is selected, so none purchased.
    const day = await get(
      `/api/v1/sites/${shop}/ecommerce?from=2026-04-01&to=2026-04-01&filters=${encodeURIComponent('page==/cart')}`,
    );
    expect(day.status).toBe(200);
    expect(day.body.data).toMatchObject({
      revenue: 3,
      orders: 1,
      purchasing_sessions: 0,
      conversion_rate: 0,
    });
  });

  it('answers zeros under a page condition no session meets', async () => {
    const res = await get(
      `/api/v1/sites/${shop}/ecommerce?${RANGE}&filters=${encodeURIComponent('page==/nowhere')}`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      revenue: 0,
      orders: 0,
      average_order_value: 0,
      items_sold: 0,
      purchasing_sessions: 0,
      top_products: [],
    });
    expect(res.body.data.revenue_by_day).toEqual(
      ['2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31'].map((date) => ({
        date,
        revenue: 0,
        orders: 0,
      })),
    );
  });

  it('answers zeros and one zero entry per day for a range without orders or sessions', async () => {
    const res = await get(`/api/v1/sites/${shop}/ecommerce?from=2025-12-30&to=2026-01-01`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      currency: 'EUR',
      revenue: 0,
      orders: 0,
      average_order_value: 0,
      purchasing_sessions: 0,
      conversion_rate: 0,
      items_sold: 0,
      top_products: [],
      revenue_by_day: [
        { date: '2025-12-30', revenue: 0, orders: 0 },
        { date: '2025-12-31', revenue: 0, orders: 0 },
        { date: '2026-01-01', revenue: 0, orders: 0 },
      ],
    });
  });

  it('counts a purchase the aggregator has not seen yet in the session row it has (the tail)', async () => {
    const user = await env.user();
    const late = await env.site({ timezone: 'UTC', currency: 'EUR', members: [user] });
    const lateKey = (await env.key(user)).key;
    expect((await env.importHits([pageview(late, 'L1', '2026-06-10T10:00:00Z', '/')])).rejections).toEqual(
      [],
    );
    await env.aggregate();
    // A purchase of L1 stamped the evening before, imported after the aggregate: L1's row still
    // starts on the 10th, and its only order is stamped before the range.
    const purchaseBefore = purchase(late, 'L1', '2026-06-09T23:00:00Z', 'late-1', '12.00', eur);
    expect((await env.importHits([purchaseBefore])).rejections).toEqual([]);
    const report = async () =>
      (
        await request(app.getHttpServer())
          .get(`/api/v1/sites/${late}/ecommerce?from=2026-06-10&to=2026-06-10`)
          .set('Authorization', `Bearer ${lateKey}`)
      ).body.data as Record<string, unknown>;
    expect(await report()).toMatchObject({
      orders: 0,
      revenue: 0,
      purchasing_sessions: 1,
      conversion_rate: 100,
    });
    // Aggregated, L1 starts on the 9th: the 10th has no session left.
    await env.aggregate();
    expect(await report()).toMatchObject({ orders: 0, purchasing_sessions: 0, conversion_rate: 0 });
  });

  // A plan, not a time. SQLite has no statistics to plan by: the queued sessions' count once
  // walked every session of the range and, for each, scanned every order since the range start
  // (6.7 s for 30k sessions and 875 orders in the bench). MariaDB's optimizer chooses by its own
  // statistics, and its plans are covered by the 10M benchmark (BENCHMARKS.md), so this check
  // runs on SQLite only.
  (TEST_ENGINE === 'sqlite' ? it : it.skip)(
    "counts the queued purchasing sessions from the queue, each session's orders by its index (SQLite plan)",
    async () => {
      const site = { id: shop, timezone: 'Europe/Berlin', currency: 'EUR', trackingMode: 'full' as const };
      const query = await app.get(StatsQueryParser).parse(site, { from: '2026-03-28', to: '2026-03-31' });
      const compiled = env.dialect.renderIndexHints(
        ecommerceStatements.purchasingSessionsByOrders(query)(env.dialect),
      );
      const plan = (
        await app
          .get(ReportDb)
          .select<{ detail: string }>(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters])
      ).map((row) => row.detail);
      expect(plan).toEqual(
        expect.arrayContaining([
          'SEARCH q USING PRIMARY KEY (site_id=?)',
          'SEARCH po USING INDEX ix_orders_site_session (site_id=? AND session_id=?)',
        ]),
      );
      // Neither part walks the range's sessions: the first looks each ordering session up.
      expect(plan.filter((line) => /\b(SCAN|SEARCH) s USING (COVERING )?INDEX/.test(line))).toEqual([]);
    },
  );

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=2.5', 'limit'],
    ['page=1', 'page'],
    ['currency=USD', 'currency'],
    ['from=2026-13-01', 'from'],
    ['from=28-03-2026', 'from'],
    ['to=2026-02-29', 'to'],
    ['from=2026-04-01&to=2026-03-01', 'from'],
    ['timezone=CEST', 'timezone'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const res = await get(`/api/v1/sites/${shop}/ecommerce?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, title: 'Bad Request' });
    expect(res.body.errors).toEqual([expect.objectContaining({ parameter })]);
  });
});
