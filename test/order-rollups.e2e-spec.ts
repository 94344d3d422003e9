import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser, toCents } from '@app/stats';
import request from 'supertest';
import { EcommerceService } from '../apps/api/src/ecommerce/ecommerce.service';
import { purchase } from './support/hits';
import { random } from './support/random';
import { TestEnv } from './support/test-env';

const DAY_MS = 86_400_000;
const QUARTER_MS = 900_000;
const MARCH = Date.parse('2026-03-01T00:00:00Z');
const SKUS = ['A', 'B', 'C', 'D', 'E'];

interface Line {
  sku: string;
  name: string;
  quantity: number;
  price: string;
}
interface Order {
  id: string;
  ts: number;
  revenue: string;
  items: Line[];
}

/**
 * Orders of March 2026 in two imports: many around UTC midnight and on quarter-hour edges,
 * some listing a sku twice, pairs at the same instant with different names for the same sku,
 * and in the second import a repeat of some first-import order ids (the first stored wins).
 */
function fixture(): Order[][] {
  const rnd = random(31);
  const imports: Order[][] = [[], []];
  for (let n = 0; n < 160; n++) {
    const day = MARCH + rnd.int(0, 30) * DAY_MS;
    const ts =
      n % 4 === 0
        ? day + (rnd.next() < 0.5 ? -1 : 1) * rnd.int(0, 30) * 60_000
        : n % 4 === 1
          ? day + rnd.int(0, 95) * QUARTER_MS - rnd.int(0, 1)
          : day + Math.floor(rnd.next() * DAY_MS);
    const items: Line[] = Array.from({ length: rnd.int(1, 3) }, (_, i) => ({
      sku: rnd.pick(SKUS),
      name: `${n}/${i}`,
      quantity: rnd.int(1, 4),
      price: `${rnd.int(1, 5000) / 100}`,
    }));
    const order = { id: `o-${n}`, ts, revenue: `${rnd.int(100, 99_999) / 100}`, items };
    imports[n < 120 ? 0 : 1].push(order);
    if (n % 15 === 0) {
      // The same instant and sku, imported later: the earlier import's line names the product.
      imports[1].push({ ...order, id: `o-${n}-twin`, items: [{ ...items[0], name: `${n}/twin` }] });
    }
    if (n % 20 === 0) imports[1].push({ ...order, revenue: '1.00', items: [{ ...items[0], quantity: 9 }] });
  }
  return imports;
}

/**
 * The order rollups (issue #10): orders and items by quarter hour (and items by UTC day) of the
 * order ts, added by `import` with the orders; e-commerce reads them over whole quarter hours.
 */
describe('Order rollups', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  const imports = fixture();
  /** The orders stored: the first import of an order id wins. */
  const stored = new Map<string, Order>();

  const importOrders = async (orders: Order[]) => {
    const hits = orders.map((o) =>
      purchase(site.id, `s-${o.id}`, new Date(o.ts).toISOString(), o.id, o.revenue, { items: o.items }),
    );
    expect((await env.importHits(hits)).rejections).toEqual([]);
    for (const o of orders) if (!stored.has(o.id)) stored.set(o.id, o);
  };

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'America/New_York', members: [user] });
    site = { id, timezone: 'America/New_York', currency: 'USD', trackingMode: 'full' };
    await importOrders(imports[0]);
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const RANGES = [
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-03-07', to: '2026-03-09' },
    { from: '2026-03-15', to: '2026-03-15' },
  ];

  const ecommerce = async (range: object) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}/ecommerce`)
      .query({ ...range, limit: 100 })
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return res.body as { data: Record<string, unknown> & { top_products: Array<Record<string, unknown>> } };
  };
  const raw = async (range: { from: string; to: string }) =>
    JSON.parse(
      JSON.stringify(
        await app
          .get(EcommerceService)
          .report({ ...(await app.get(StatsQueryParser).parse(site, range)), tables: 'raw' }, { limit: 100 }),
      ),
    ) as unknown;

  /** The three rollups worked out from the stored orders. */
  const expectedTables = () => {
    const orders = new Map<number, { orders: number; cents: bigint; items: number }>();
    const lines = new Map<string, { quantity: number; cents: bigint; orders: Set<string> }>();
    for (const o of stored.values()) {
      const quarter = Math.floor(o.ts / QUARTER_MS) * QUARTER_MS;
      const row = orders.get(quarter) ?? { orders: 0, cents: 0n, items: 0 };
      row.orders++;
      row.cents += toCents(o.revenue);
      row.items += o.items.reduce((n, l) => n + l.quantity, 0);
      orders.set(quarter, row);
      for (const grain of [QUARTER_MS, DAY_MS]) {
        const bucket = Math.floor(o.ts / grain) * grain;
        for (const l of o.items) {
          const k = `${grain === DAY_MS ? 'day' : 'quarter'} ${new Date(bucket).toISOString()} ${l.sku}`;
          const line = lines.get(k) ?? { quantity: 0, cents: 0n, orders: new Set<string>() };
          line.quantity += l.quantity;
          line.cents += BigInt(l.quantity) * toCents(l.price);
          line.orders.add(o.id);
          lines.set(k, line);
        }
      }
    }
    return {
      orders: [...orders]
        .map(([b, r]) => `${new Date(b).toISOString()} ${r.orders} ${r.cents} ${r.items}`)
        .sort(),
      items: [...lines].map(([k, l]) => `${k} ${l.quantity} ${l.cents} ${l.orders.size}`).sort(),
    };
  };
  /** A stored bucket: a Date from MariaDB, UTC text from SQLite. */
  const iso = (b: Date | string) =>
    new Date(b instanceof Date ? b.getTime() : Date.parse(`${b.replace(' ', 'T')}Z`)).toISOString();
  const storedTables = async () => {
    const revenue = env.decimalSql('revenue', 2);
    const orders = await env.ds.query<
      Array<{ bucket: Date; orders: number; revenue: string; items: number }>
    >(`SELECT bucket, orders, ${revenue} AS revenue, items FROM order_rollups WHERE site_id = ?`, [site.id]);
    const items: string[] = [];
    for (const [grain, table] of [
      ['quarter', 'item_rollups'],
      ['day', 'item_day_rollups'],
    ]) {
      const rows = await env.ds.query<
        Array<{ bucket: Date; sku: string; quantity: number; revenue: string; orders: number }>
      >(`SELECT bucket, sku, quantity, ${revenue} AS revenue, orders FROM ${table} WHERE site_id = ?`, [
        site.id,
      ]);
      items.push(
        ...rows.map(
          (r) =>
            `${grain} ${iso(r.bucket)} ${r.sku} ${Number(r.quantity)} ${toCents(r.revenue)} ${Number(r.orders)}`,
        ),
      );
    }
    return {
      orders: orders
        .map((r) => `${iso(r.bucket)} ${Number(r.orders)} ${toCents(r.revenue)} ${Number(r.items)}`)
        .sort(),
      items: items.sort(),
    };
  };

  it('holds every stored order and item once, by quarter hour and UTC day of the order ts', async () => {
    const tables = await storedTables();
    expect(tables).toEqual(expectedTables());
    // Orders across UTC midnight: the day rows are not the quarter rows.
    expect(tables.items.filter((r) => r.startsWith('day')).length).toBeGreaterThan(20);
  });

  it('answers e-commerce as the raw computation does, names from the first order', async () => {
    for (const range of RANGES) expect(await ecommerce(range)).toEqual(await raw(range));
  });

  it('reads the rollups: rows changed by hand show in the report', async () => {
    const bump = async (n: number) => {
      await env.ds.query('UPDATE order_rollups SET orders = orders + ? WHERE site_id = ?', [n, site.id]);
      await env.ds.query(
        "UPDATE item_day_rollups SET quantity = quantity + ? WHERE site_id = ? AND sku = 'A'",
        [n, site.id],
      );
    };
    const before = await ecommerce(RANGES[0]);
    await bump(1);
    try {
      const after = await ecommerce(RANGES[0]);
      expect(after.data.orders).toBeGreaterThan(before.data.orders as number);
      const a = (body: typeof before) =>
        body.data.top_products.find((p) => p.sku === 'A')!.quantity as number;
      expect(a(after)).toBeGreaterThan(a(before));
    } finally {
      await bump(-1);
    }
  });

  it('adds a later import at once, without aggregate, a repeated order id counting once', async () => {
    await importOrders(imports[1]);
    expect(await storedTables()).toEqual(expectedTables());
    for (const range of RANGES) expect(await ecommerce(range)).toEqual(await raw(range));
    // A same-instant twin imported later does not name its product.
    const names = (await ecommerce(RANGES[0])).data.top_products.map((p) => p.name as string);
    expect(names.some((n) => n.endsWith('/twin'))).toBe(false);
  });

  it('builds the same rollups from the orders when migrating a database that has them', async () => {
    await env.migrateAgainFrom(/OrderRollups1765800000000$/);
    expect(await storedTables()).toEqual(expectedTables());
  });
});
