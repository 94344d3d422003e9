import { DateTime } from 'luxon';

/** Deterministic PRNG (mulberry32): the same seed gives the same demo data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Weighted<T> = Array<[T, number]>;

function pick<T>(random: () => number, options: Weighted<T>): T {
  const total = options.reduce((n, [, w]) => n + w, 0);
  let r = random() * total;
  for (const [value, w] of options) {
    r -= w;
    if (r < 0) return value;
  }
  return options[options.length - 1][0];
}

export interface DemoSite {
  id: number;
  kind: 'shop' | 'blog';
  timezone: string;
  currency: string;
  tracking: 'full' | 'cookieless';
  sessionsPerDay: number;
}

const CHANNELS: Weighted<[string, string[] | null]> = [
  [['Organic Search', ['google', 'bing', 'duckduckgo']], 40],
  [['Direct', null], 25],
  [['Social', ['twitter', 'facebook', 'linkedin', 'reddit']], 12],
  [['Referral', ['news.example', 'partner.example', 'forum.example']], 10],
  [['Paid Search', ['google-ads']], 7],
  [['Email', ['newsletter']], 6],
];
const COUNTRIES: Weighted<string | undefined> = [
  ['DE', 24],
  ['US', 26],
  ['GB', 10],
  ['FR', 8],
  ['NL', 6],
  ['IN', 8],
  ['CA', 5],
  ['AT', 4],
  ['BR', 3],
  ['JP', 3],
  [undefined, 3],
];
const DEVICES: Weighted<string> = [
  ['desktop', 55],
  ['mobile', 40],
  ['tablet', 5],
];
const BROWSERS: Weighted<string | undefined> = [
  ['Chrome', 58],
  ['Safari', 20],
  ['Firefox', 10],
  ['Edge', 9],
  [undefined, 3],
];
/** Share of the day's sessions starting in each local hour. */
const HOURS = [1, 0.6, 0.4, 0.3, 0.3, 0.5, 1, 2, 3.5, 4.5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5.5, 6, 5, 3.5, 2];
/** Monday … Sunday. */
const WEEKDAY = [1.1, 1.15, 1.12, 1.08, 1.0, 0.72, 0.66];

const PRODUCTS = [
  { sku: 'TEE-01', name: 'Logo T-shirt', price: '19.90' },
  { sku: 'MUG-01', name: 'Coffee mug', price: '9.50' },
  { sku: 'CAP-01', name: 'Cap', price: '14.00' },
  { sku: 'HOOD-01', name: 'Hoodie', price: '49.00' },
  { sku: 'STK-01', name: 'Sticker pack', price: '3.99' },
  { sku: 'BAG-01', name: 'Tote bag', price: '12.00' },
];
const SHOP_PAGES: Weighted<string> = [
  ['/', 20],
  ['/products', 18],
  ['/pricing', 8],
  ['/about', 4],
  ['/blog/launch', 5],
  ['/blog/care-guide', 4],
  ...PRODUCTS.map((p): [string, number] => [`/products/${p.sku.toLowerCase()}`, 6]),
];
const BLOG_PAGES: Weighted<string> = [
  ['/', 15],
  ['/guides/getting-started', 12],
  ['/guides/advanced', 8],
  ['/guides/faq', 6],
  ['/posts/2026/hello', 10],
  ['/posts/2026/release-notes', 9],
  ['/posts/2026/benchmarks', 7],
  ['/about', 4],
  ['/newsletter', 5],
];

export interface DemoHit {
  [field: string]: unknown;
}

/**
 * The slow growth of the demo sites: the last 90 days grow from 0.8 to 1 of today's traffic,
 * the year before from 0.5 to 0.8, so `compare=year_over_year` shows real growth.
 */
export function trend(back: number): number {
  if (back < 90) return 1 - (0.2 * back) / 90;
  return Math.max(0.5, 0.8 - (0.3 * (back - 90)) / 310);
}

export interface DemoWindow {
  /** The oldest day to generate, in days before today (default `days` − 1). */
  oldestBack?: number;
  /** The most recent day to generate, in days before today (default 0: today). */
  newestBack?: number;
  /** Prefix of hit and order ids (default `h`): windows generated apart must differ. */
  idPrefix?: string;
}

/**
 * Believable traffic for the trailing `days` days up to `now` (or the days of `window`):
 * weekly and daily seasonality, a slow growth trend, returning visitors (full tracking) or
 * daily-rotating ids (cookieless), bounces, custom events (registered and not), and purchases
 * with items on the shop.
 */
export function* generateDemoHits(
  sites: DemoSite[],
  days: number,
  now: Date,
  seed: number,
  window: DemoWindow = {},
): Generator<DemoHit> {
  const random = rng(seed);
  let hitNo = 0;
  for (const site of sites) {
    const today = DateTime.fromJSDate(now, { zone: site.timezone }).startOf('day');
    const people = Math.max(50, Math.round(site.sessionsPerDay * days * 0.45));
    for (let back = window.oldestBack ?? days - 1; back >= (window.newestBack ?? 0); back--) {
      const day = today.minus({ days: back });
      const expected = site.sessionsPerDay * WEEKDAY[day.weekday - 1] * trend(back) * (0.9 + random() * 0.2);
      const count = Math.round(expected);
      for (let s = 0; s < count; s++) {
        const hour = pick(
          random,
          HOURS.map((w, h): [number, number] => [h, w]),
        );
        let start = day.plus({
          hours: hour,
          minutes: Math.floor(random() * 60),
          seconds: Math.floor(random() * 60),
        });
        if (start.toMillis() > now.getTime()) {
          // Today's sessions are spread over the hours that have passed, some within the last minutes.
          if (random() < 0.7) continue;
          start = DateTime.fromMillis(now.getTime() - Math.floor(random() * 25 * 60_000), {
            zone: site.timezone,
          });
        }
        yield* sessionHits(random, site, {
          start,
          now,
          people,
          day: day.toISODate()!,
          index: s,
          next: () => ++hitNo,
          idPrefix: window.idPrefix,
        });
      }
    }
  }
}

/** Where and when one session happens: its start, the clock, the visitor pool, ids. */
export interface SessionAt {
  start: DateTime;
  now: Date;
  /** Size of the site's visitor pool; returning visitors come from its first fifth. */
  people: number;
  /** Local day (YYYY-MM-DD) and number of the session that day, for its ids. */
  day: string;
  index: number;
  /** The next hit number, unique among the hits generated together. */
  next: () => number;
  /** Prefix of hit and order ids (default `h`), so that live hits never collide with the bulk. */
  idPrefix?: string;
}

/** The hits of one session: pageviews, some events, on the shop sometimes a purchase. */
export function* sessionHits(random: () => number, site: DemoSite, at: SessionAt): Generator<DemoHit> {
  const returning = random() < 0.35;
  const person = returning ? Math.floor(random() * at.people * 0.2) : Math.floor(random() * at.people);
  const visitorId =
    site.tracking === 'cookieless' ? `v${site.id}-${at.day}-${person}` : `v${site.id}-${person}`;
  const sessionId = `s${site.id}-${at.day}-${at.index}-${Math.floor(random() * 1e9).toString(36)}`;
  const [channel, sources] = pick(random, CHANNELS);
  const common: DemoHit = {
    site_id: site.id,
    session_id: sessionId,
    visitor_id: visitorId,
    channel,
    ...(sources ? { source: sources[Math.floor(random() * sources.length)] } : {}),
    ...(() => {
      const country = pick(random, COUNTRIES);
      return country ? { country } : {};
    })(),
    device: pick(random, DEVICES),
    ...(() => {
      const browser = pick(random, BROWSERS);
      return browser ? { browser } : {};
    })(),
  };
  let t = at.start.toMillis();
  let last = 0;
  const emit = (fields: DemoHit): DemoHit => {
    last = at.next();
    return {
      id: `${at.idPrefix ?? 'h'}${site.id}-${last}`,
      ts: new Date(Math.min(t, at.now.getTime())).toISOString(),
      ...common,
      ...fields,
    };
  };
  const pages = site.kind === 'shop' ? SHOP_PAGES : BLOG_PAGES;
  const bounce = random() < 0.38;
  const views = bounce ? 1 : 2 + Math.floor(random() * 6);
  let path = pick(random, pages);
  for (let v = 0; v < views; v++) {
    const seconds = 5 + Math.floor(random() * 180);
    yield emit({
      type: 'pageview',
      path,
      time_on_page_seconds: seconds,
      scroll_depth: Math.min(100, Math.floor(random() * 110)),
    });
    t += seconds * 1000;
    if (!bounce && random() < 0.12) {
      const name =
        site.kind === 'shop'
          ? pick(random, [
              ['add_to_cart', 5],
              ['signup', 2],
              ['newsletter', 1],
              ['debug_ping', 1],
            ] as Weighted<string>)
          : pick(random, [
              ['newsletter', 3],
              ['share', 3],
              ['download', 2],
              ['scroll_90', 1],
            ] as Weighted<string>);
      yield emit({ type: 'event', name, path });
      t += 2000;
    }
    path = pick(random, pages);
  }
  if (site.kind === 'shop' && !bounce && random() < 0.09) {
    yield emit({ type: 'pageview', path: '/checkout', time_on_page_seconds: 40, scroll_depth: 80 });
    t += 40_000;
    const lines = 1 + Math.floor(random() * 3);
    const items = Array.from({ length: lines }, () => {
      const p = PRODUCTS[Math.floor(random() * PRODUCTS.length)];
      return { sku: p.sku, name: p.name, quantity: 1 + Math.floor(random() * 3), price: p.price };
    });
    const revenue = items.reduce((cents, i) => cents + Math.round(Number(i.price) * 100) * i.quantity, 0);
    yield emit({
      type: 'purchase',
      order_id: `${at.idPrefix ?? ''}o${site.id}-${last}`,
      revenue: (revenue / 100).toFixed(2),
      currency: site.currency,
      items,
      path: '/checkout',
    });
    t += 3000;
    yield emit({ type: 'pageview', path: '/thank-you', time_on_page_seconds: 15, scroll_depth: 100 });
  }
}
