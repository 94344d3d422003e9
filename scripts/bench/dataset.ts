/**
 * The benchmark's synthetic traffic: deterministic for a given seed, scale and `now`, written
 * as NDJSON in bounded memory (one hour of hits at a time, plus hits still to be delivered).
 *
 * One big site (America/New_York by default) gets ~3M sessions and ~10M pageviews over the 30
 * days up to `now` at scale 1; 1,000 small sites beside it share a tenth of that volume, so
 * every index the reports use is multi-tenant. Hits are written in delivery order: by hour,
 * timestamps jittered within the hour (out of order), ~1 % of hits delivered 1–36 hours late,
 * ~0.2 % delivered twice (the importer must ignore the copy).
 *
 * Four files:
 * - `main.ndjson`: every hit delivered before the last hour (imported into empty tables);
 * - `hour.ndjson`: the hits delivered in the last hour (the "one more hour" for `aggregate`);
 * - `again.ndjson`: the hits delivered in the last 24 hours once more, as new hits (new hit,
 *   session and order ids): the import rate into tables that already hold the data;
 * - `live.ndjson`: the big site's hits stamped in its busiest half hour of the last week (the
 *   first half of the hour its traffic shape weighs most), in delivery order: realtime's window
 *   (writeLiveSlice), as busy whatever the time of day the dataset ends at.
 */
import { createWriteStream, mkdirSync, WriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DateTime } from 'luxon';
import { rng } from '../../apps/cli/src/demo/demo-traffic';

export const HOUR_MS = 3_600_000;
export const DAYS = 30;

export interface SiteProfile {
  /** Position in the dataset: 0 is the big site, 1… the small ones. */
  index: number;
  /** Filled in once the site exists in the database. */
  id: number;
  timezone: string;
  currency: string;
  tracking: 'full' | 'cookieless';
  /** Expected sessions over the whole 30 days. */
  sessions: number;
  big: boolean;
}

export interface DatasetOptions {
  scale: number;
  seed: number;
  smallSites: number;
  now: Date;
  dir: string;
  bigSiteTimezone: string;
  onHits?: (n: number) => void;
}

export interface DatasetFiles {
  main: string;
  hour: string;
  again: string;
  live: string;
}

export interface DatasetSummary {
  files: DatasetFiles;
  lines: { main: number; hour: number; again: number; live: number };
  big_site: { sessions: number; pageviews: number; events: number; purchases: number; hits: number };
  small_sites: { sites: number; sessions: number; hits: number };
  late_hits: number;
  resent_hits: number;
  from: string;
  to: string;
  seconds: number;
}

/** Registered events and goals of the big site (created before the import). */
export const BIG_SITE_EVENTS = [
  'signup',
  'newsletter',
  'add_to_cart',
  'download',
  'video_play',
  'share',
  'search',
  'outbound_click',
];
export const BIG_SITE_GOALS: Array<{ name: string; event?: string; path?: string }> = [
  { name: 'Signed up', event: 'signup' },
  { name: 'Newsletter', event: 'newsletter' },
  { name: 'Reached checkout', path: '/checkout*' },
  { name: 'Order completed', path: '/thank-you' },
];
/** The funnel the benchmark asks for: 3 steps. */
export const BENCH_FUNNEL = [
  { type: 'pageview', path: '/products/*' },
  { type: 'event', name: 'add_to_cart' },
  { type: 'pageview', path: '/checkout' },
];

const SMALL_SITE_ZONES = [
  'UTC',
  'Europe/Berlin',
  'Europe/London',
  'America/Los_Angeles',
  'America/Sao_Paulo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Africa/Lagos',
];

type Weighted<T> = Array<[T, number]>;

/** A cumulative table: picking is a binary search, not a scan, for the long lists. */
class Picker<T> {
  private readonly cumulative: number[] = [];
  private readonly values: T[] = [];
  private readonly total: number;

  constructor(options: Weighted<T>) {
    let sum = 0;
    for (const [value, w] of options) {
      sum += w;
      this.cumulative.push(sum);
      this.values.push(value);
    }
    this.total = sum;
  }

  pick(random: () => number): T {
    const r = random() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid] > r) hi = mid;
      else lo = mid + 1;
    }
    return this.values[lo];
  }
}

/** Zipf weights: the k-th value weighs 1/k^s. */
const zipf = <T>(values: T[], s = 1): Weighted<T> => values.map((v, k) => [v, 1 / Math.pow(k + 1, s)]);

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

const SEARCH = ['google', 'bing', 'duckduckgo', 'yahoo', 'ecosia', 'yandex'];
const SOCIAL = ['facebook', 'twitter', 'linkedin', 'reddit', 'instagram', 'youtube', 'pinterest', 'tiktok'];
const REFERRERS = range(300, (i) => `ref${i + 1}.example`);
const CAMPAIGNS = range(40, (i) => `campaign-${i + 1}`);
const CHANNELS = new Picker<[string, Picker<string> | null]>([
  [['Organic Search', new Picker(zipf(SEARCH, 1.6))], 42],
  [['Direct', null], 24],
  [['Social', new Picker(zipf(SOCIAL, 1.1))], 10],
  [['Referral', new Picker(zipf(REFERRERS, 1))], 9],
  [['Paid Search', new Picker(zipf(['google-ads', 'bing-ads'], 2))], 7],
  [['Email', new Picker(zipf(CAMPAIGNS, 1))], 5],
  [['Display', new Picker(zipf(['adnetwork-a', 'adnetwork-b', 'adnetwork-c'], 1))], 2],
  [
    [
      'Affiliates',
      new Picker(
        zipf(
          range(50, (i) => `partner${i + 1}.example`),
          1.2,
        ),
      ),
    ],
    1,
  ],
]);
const COUNTRY_CODES = (
  'US CA GB DE IN FR BR AU NL ES IT MX JP PL SE CH BE AT IE DK NO FI PT CZ RO HU GR TR IL ZA ' +
  'NG EG KE AR CL CO PE SG MY ID PH TH VN KR TW HK NZ UA RU PK BD LK NP AE SA QA'
).split(' ');
const COUNTRIES = new Picker<string | null>([...zipf<string | null>(COUNTRY_CODES, 1.3), [null, 0.05]]);
const DEVICES = new Picker<string | null>([
  ['desktop', 52],
  ['mobile', 42],
  ['tablet', 5],
  [null, 1],
]);
const BROWSERS: Record<string, Picker<string | null>> = {
  desktop: new Picker<string | null>([
    ['Chrome', 64],
    ['Edge', 13],
    ['Safari', 10],
    ['Firefox', 9],
    ['Opera', 2],
    [null, 2],
  ]),
  mobile: new Picker<string | null>([
    ['Chrome', 48],
    ['Safari', 40],
    ['Samsung Internet', 7],
    ['Firefox', 2],
    [null, 3],
  ]),
};
const PRODUCTS = range(200, (i) => ({
  sku: `SKU-${String(i + 1).padStart(4, '0')}`,
  name: `Product ${i + 1}`,
  cents: 500 + ((i * 7919) % 19_500),
}));
const PRODUCT = new Picker(zipf(PRODUCTS, 1.1));
const POSTS = new Picker(
  zipf(
    range(1000, (i) => `/blog/post-${i + 1}`),
    1.05,
  ),
);
const DOCS = new Picker(
  zipf(
    range(400, (i) => `/docs/page-${i + 1}`),
    1,
  ),
);
const SMALL_PAGES = new Picker(
  zipf(
    range(40, (i) => (i === 0 ? '/' : `/page-${i}`)),
    1.2,
  ),
);

/** Where a visit of each channel lands, and where a page leads next. */
type Section = 'home' | 'pricing' | 'products' | 'product' | 'post' | 'docs' | 'signup' | 'about';
const ENTRY: Record<string, Picker<Section>> = {
  'Organic Search': new Picker<Section>([
    ['post', 45],
    ['home', 15],
    ['product', 20],
    ['docs', 15],
    ['pricing', 5],
  ]),
  Direct: new Picker<Section>([
    ['home', 60],
    ['pricing', 10],
    ['products', 10],
    ['docs', 10],
    ['product', 10],
  ]),
  other: new Picker<Section>([
    ['home', 30],
    ['post', 30],
    ['product', 25],
    ['pricing', 10],
    ['products', 5],
  ]),
};
const NEXT = new Picker<Section>([
  ['home', 12],
  ['pricing', 10],
  ['products', 14],
  ['product', 28],
  ['post', 18],
  ['docs', 10],
  ['signup', 4],
  ['about', 4],
]);
const EVENT_NAMES = new Picker<string>([
  ['scroll_90', 22],
  ['search', 12],
  ['outbound_click', 10],
  ['video_play', 8],
  ['download', 6],
  ['share', 4],
  ['newsletter', 4],
  ['js_error', 2],
]);

/** Share of sessions starting in each local hour, and on each weekday (Monday first). */
const HOURS = [1, 0.6, 0.4, 0.3, 0.3, 0.5, 1, 2, 3.5, 4.5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5.5, 6, 5, 3.5, 2];
const WEEKDAY = [1.1, 1.15, 1.12, 1.08, 1.0, 0.72, 0.66];

interface OutHit {
  line: Record<string, unknown>;
  ts: number;
  /** Sort key within the delivery hour: ts plus up to a minute of jitter. */
  order: number;
}

class Output {
  private readonly stream: WriteStream;
  lines = 0;

  constructor(file: string) {
    this.stream = createWriteStream(file, { highWaterMark: 1 << 20 });
  }

  async write(text: string): Promise<void> {
    this.lines++;
    if (!this.stream.write(text))
      await new Promise<void>((resolve) => this.stream.once('drain', () => resolve()));
  }

  end(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stream.on('error', reject);
      this.stream.end(resolve);
    });
  }
}

/** The sites of a dataset: the big one first, then the small ones with seeded zones. */
export function siteProfiles(
  options: Pick<DatasetOptions, 'scale' | 'seed' | 'smallSites' | 'bigSiteTimezone'>,
) {
  const random = rng(options.seed ^ 0x5eed);
  const bigSessions = Math.round(3_000_000 * options.scale);
  const profiles: SiteProfile[] = [
    {
      index: 0,
      id: 0,
      timezone: options.bigSiteTimezone,
      currency: 'USD',
      tracking: 'full',
      sessions: bigSessions,
      big: true,
    },
  ];
  const weights = range(options.smallSites, () => String(0.2 + random() * 1.8)).map(Number);
  const total = weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < options.smallSites; i++)
    profiles.push({
      index: i + 1,
      id: 0,
      timezone: SMALL_SITE_ZONES[Math.floor(random() * SMALL_SITE_ZONES.length)],
      currency: random() < 0.7 ? 'USD' : 'EUR',
      tracking: random() < 0.8 ? 'full' : 'cookieless',
      sessions: (bigSessions * 0.1 * weights[i]) / total,
      big: false,
    });
  return profiles;
}

/**
 * Writes the dataset's four files for `sites` (ids assigned) and returns what it wrote.
 * Everything random comes from one seeded generator, consumed in a fixed order.
 */
export async function writeDataset(options: DatasetOptions, sites: SiteProfile[]): Promise<DatasetSummary> {
  const started = Date.now();
  const random = rng(options.seed);
  mkdirSync(options.dir, { recursive: true });
  const files: DatasetFiles = {
    main: path.join(options.dir, 'main.ndjson'),
    hour: path.join(options.dir, 'hour.ndjson'),
    again: path.join(options.dir, 'again.ndjson'),
    live: path.join(options.dir, 'live.ndjson'),
  };
  const out = {
    main: new Output(files.main),
    hour: new Output(files.hour),
    again: new Output(files.again),
    live: new Output(files.live),
  };
  const end = Math.floor(options.now.getTime() / 60_000) * 60_000;
  const hours = DAYS * 24;
  const start = end - hours * HOUR_MS;
  const summary: DatasetSummary = {
    files,
    lines: { main: 0, hour: 0, again: 0, live: 0 },
    big_site: { sessions: 0, pageviews: 0, events: 0, purchases: 0, hits: 0 },
    small_sites: { sites: sites.length - 1, sessions: 0, hits: 0 },
    late_hits: 0,
    resent_hits: 0,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    seconds: 0,
  };

  // The expected sessions of a site in each hour: its local hour and weekday, a slow trend.
  const shapes = new Map<string, Float64Array>();
  const shapeOf = (zone: string) => {
    let shape = shapes.get(zone);
    if (!shape) {
      shape = new Float64Array(hours);
      let sum = 0;
      for (let h = 0; h < hours; h++) {
        const local = DateTime.fromMillis(start + h * HOUR_MS, { zone });
        shape[h] = HOURS[local.hour] * WEEKDAY[local.weekday - 1] * (0.85 + (0.3 * h) / hours);
        sum += shape[h];
      }
      for (let h = 0; h < hours; h++) shape[h] /= sum;
      shapes.set(zone, shape);
    }
    return shape;
  };

  const pending = new Map<number, OutHit[]>();
  const deliver = (hit: OutHit, bucket: number) => {
    const list = pending.get(bucket);
    if (list) list.push(hit);
    else pending.set(bucket, [hit]);
  };
  let hitNo = 0;
  let sessionNo = 0;
  let orderNo = 0;
  const returningPool = sites.map((s) => Math.max(20, Math.round(s.sessions * 0.25)));
  let newVisitors = 0;

  const emitSession = (site: SiteProfile, startMs: number) => {
    sessionNo++;
    const dayKey = Math.floor((startMs - start) / 86_400_000);
    const returning = random() < 0.3;
    const person = returning
      ? `r${Math.floor(Math.pow(random(), 2) * returningPool[site.index])}`
      : `n${++newVisitors}`;
    const visitor =
      site.tracking === 'cookieless' ? `v${site.id}-${dayKey}-${person}` : `v${site.id}-${person}`;
    const [channel, sources] = CHANNELS.pick(random);
    const device = DEVICES.pick(random);
    const common: Record<string, unknown> = {
      site_id: site.id,
      session_id: `s${site.id}-${sessionNo.toString(36)}`,
      visitor_id: visitor,
      channel,
    };
    if (sources) common.source = sources.pick(random);
    const country = COUNTRIES.pick(random);
    if (country) common.country = country;
    if (device) common.device = device;
    const browser = BROWSERS[device === 'desktop' ? 'desktop' : 'mobile'].pick(random);
    if (browser) common.browser = browser;

    const bounce = random() < 0.42;
    const views = bounce ? 1 : 2 + Math.floor(-Math.log(1 - random()) * 3.4);
    const buys = site.big && !bounce && random() < 0.05;
    let t = startMs;
    const hitsOut: Array<Record<string, unknown>> = [];
    const push = (fields: Record<string, unknown>, advanceMs: number) => {
      hitNo++;
      hitsOut.push({ id: `h${hitNo.toString(36)}`, ts: t, ...common, ...fields });
      t += advanceMs;
    };
    const pageview = (pathName: string, last: boolean) => {
      const seconds = Math.round(Math.exp(3.2 + random() * 1.6)) + Math.floor(random() * 5);
      const fields: Record<string, unknown> = { type: 'pageview', path: pathName };
      if (!last || random() < 0.4) fields.time_on_page_seconds = seconds;
      if (random() < 0.9) fields.scroll_depth = Math.min(100, Math.floor(random() * 115));
      push(fields, seconds * 1000);
    };
    const pathOf = (section: Section): string => {
      if (!site.big) return SMALL_PAGES.pick(random);
      switch (section) {
        case 'home':
          return '/';
        case 'pricing':
          return '/pricing';
        case 'products':
          return '/products';
        case 'product':
          return `/products/${PRODUCT.pick(random).sku.toLowerCase()}`;
        case 'post':
          return POSTS.pick(random);
        case 'docs':
          return DOCS.pick(random);
        case 'signup':
          return '/signup';
        case 'about':
          return '/about';
      }
    };

    let section = (ENTRY[channel] ?? ENTRY.other).pick(random);
    for (let v = 0; v < views; v++) {
      const pathName = pathOf(section);
      pageview(pathName, v === views - 1 && !buys);
      if (site.big && !bounce) {
        if (section === 'product' && random() < 0.25)
          push({ type: 'event', name: 'add_to_cart', path: pathName }, 1500);
        if (section === 'signup' && random() < 0.4)
          push({ type: 'event', name: 'signup', path: pathName }, 2000);
        if (random() < 0.12) push({ type: 'event', name: EVENT_NAMES.pick(random), path: pathName }, 2000);
      } else if (!bounce && random() < 0.08) {
        push({ type: 'event', name: EVENT_NAMES.pick(random), path: pathName }, 2000);
      }
      section = NEXT.pick(random);
    }
    if (buys) {
      const lines = 1 + Math.floor(-Math.log(1 - random()) * 1.2);
      const items = Array.from({ length: Math.min(lines, 6) }, () => {
        const p = PRODUCT.pick(random);
        return { sku: p.sku, name: p.name, quantity: 1 + Math.floor(random() * 2.5), cents: p.cents };
      });
      for (const item of items) {
        pageview(`/products/${item.sku.toLowerCase()}`, false);
        push({ type: 'event', name: 'add_to_cart', path: `/products/${item.sku.toLowerCase()}` }, 1500);
      }
      pageview('/cart', false);
      pageview('/checkout', false);
      pageview('/checkout/payment', false);
      const cents = items.reduce((sum, i) => sum + i.cents * i.quantity, 0) + shippingCents(random);
      orderNo++;
      push(
        {
          type: 'purchase',
          path: '/checkout/payment',
          order_id: `o${site.id}-${orderNo.toString(36)}`,
          revenue: (cents / 100).toFixed(2),
          currency: site.currency,
          items: items.map((i) => ({
            sku: i.sku,
            name: i.name,
            quantity: i.quantity,
            price: (i.cents / 100).toFixed(2),
          })),
        },
        2500,
      );
      pageview('/thank-you', true);
    }

    for (const line of hitsOut) {
      const ts = line.ts as number;
      if (ts >= end) continue;
      line.ts = new Date(ts).toISOString();
      let bucket = Math.floor((ts - start) / HOUR_MS);
      if (random() < 0.01) {
        bucket += 1 + Math.floor(random() * 36);
        summary.late_hits++;
      }
      const hit: OutHit = { line, ts, order: ts + random() * 60_000 };
      deliver(hit, Math.min(bucket, hours - 1));
      if (random() < 0.002) {
        summary.resent_hits++;
        deliver(hit, Math.min(bucket + 1 + Math.floor(random() * 3), hours - 1));
      }
      if (site.big) {
        summary.big_site.hits++;
        const type = line.type as string;
        if (type === 'pageview') summary.big_site.pageviews++;
        else if (type === 'event') summary.big_site.events++;
        else summary.big_site.purchases++;
      } else summary.small_sites.hits++;
    }
    if (site.big) summary.big_site.sessions++;
    else summary.small_sites.sessions++;
  };

  const renamed = (line: Record<string, unknown>): Record<string, unknown> => {
    const copy: Record<string, unknown> = { ...line, id: `a${line.id as string}` };
    copy.session_id = `a${line.session_id as string}`;
    if (line.order_id) copy.order_id = `a${line.order_id as string}`;
    return copy;
  };

  // The big site's busiest hour of the last week; its first LIVE_MINUTES are the live window.
  const bigShape = shapeOf(sites[0].timezone);
  let busiest = hours - WEEK_HOURS;
  for (let h = busiest; h < hours; h++) if (bigShape[h] > bigShape[busiest]) busiest = h;
  const liveFrom = start + busiest * HOUR_MS;
  const liveTo = liveFrom + LIVE_MINUTES * 60_000;

  for (let h = 0; h < hours; h++) {
    const slot = start + h * HOUR_MS;
    for (const site of sites) {
      const expected = site.sessions * shapeOf(site.timezone)[h];
      const count = Math.floor(expected + random());
      for (let s = 0; s < count; s++) emitSession(site, slot + Math.floor(random() * HOUR_MS));
    }
    const due = pending.get(h) ?? [];
    pending.delete(h);
    due.sort((a, b) => a.order - b.order);
    const target = h === hours - 1 ? out.hour : out.main;
    const repeat = h >= hours - 24;
    for (const hit of due) {
      await target.write(`${JSON.stringify(hit.line)}\n`);
      if (repeat) await out.again.write(`${JSON.stringify(renamed(hit.line))}\n`);
      if (hit.line.site_id === sites[0].id && hit.ts >= liveFrom && hit.ts < liveTo)
        await out.live.write(`${JSON.stringify(hit.line)}\n`);
    }
    options.onHits?.(due.length);
  }
  for (const output of Object.values(out)) await output.end();
  summary.lines = {
    main: out.main.lines,
    hour: out.hour.lines,
    again: out.again.lines,
    live: out.live.lines,
  };
  summary.seconds = (Date.now() - started) / 1000;
  return summary;
}

/** Shipping on an order: free on a third of them. */
function shippingCents(random: () => number): number {
  return random() < 0.33 ? 0 : 499;
}

/** How much traffic a live slice holds: realtime's longest window. */
export const LIVE_MINUTES = 30;

const WEEK_HOURS = 7 * 24;

export interface LiveSlice {
  file: string;
  lines: number;
}

/**
 * Realtime reads the hits of the last 30 minutes by the server's clock, and a run reaches its
 * realtime requests long after the dataset's `now` (at scale 1, after a ~20-minute backfill),
 * when that window is empty. A live slice is the big site's last LIVE_MINUTES of hits in
 * `sourceFile` (by their own ts: `live.ndjson`, its busiest half hour; `hour.ndjson` in a data
 * directory written before there was one), moved to the site `liveSiteId` and stamped to end at
 * `at`, with new hit, session and order ids (`tag`): imported just before realtime is timed,
 * the window holds as many hits as the big site's busiest half hour. A site of its own, so that
 * no other report reads them.
 */
export async function writeLiveSlice(
  sourceFile: string,
  dest: string,
  slice: { bigSiteId: number; liveSiteId: number; at: Date; tag: string },
): Promise<LiveSlice> {
  const hits = (await readFile(sourceFile, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((hit) => hit.site_id === slice.bigSiteId);
  // A loop, not Math.max(...): a large hour file holds more hits than a call takes arguments.
  const last = hits.reduce((latest, hit) => Math.max(latest, Date.parse(String(hit.ts))), -Infinity);
  const shift = slice.at.getTime() - last;
  const lines = hits
    .filter((hit) => Date.parse(String(hit.ts)) > last - LIVE_MINUTES * 60_000)
    .map((hit) => {
      const moved: Record<string, unknown> = {
        ...hit,
        id: `${String(hit.id)}${slice.tag}`,
        ts: new Date(Date.parse(String(hit.ts)) + shift).toISOString(),
        site_id: slice.liveSiteId,
        session_id: `${String(hit.session_id)}${slice.tag}`,
      };
      if (typeof hit.order_id === 'string') moved.order_id = `${hit.order_id}${slice.tag}`;
      return JSON.stringify(moved);
    });
  await writeFile(dest, lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return { file: dest, lines: lines.length };
}

/** How many sessions a queued slice gives a late pageview (writeQueuedSlice). */
export const QUEUED_SESSIONS = 50;

/**
 * The rows timed "queued" (Endpoint.queued) are timed after `import` of a queued slice and before
 * `aggregate`: for up to QUEUED_SESSIONS sessions of the big site in `sourceFile` (`hour.ndjson`,
 * derived by the run's "one more hour") without a pageview of `page` there, one late pageview of
 * `page`, stamped at the session's last hit there, with its attributes and a new hit id (`tag`).
 * Those sessions are then queued in dirty_sessions and have gained the page since they were
 * derived, as happens to a popular page between an import and the next `aggregate`: reports under
 * `page==` it cannot take every session from session_pages (docs/decisions/filters.md, "The
 * minutes after an import").
 */
export async function writeQueuedSlice(
  sourceFile: string,
  dest: string,
  slice: { bigSiteId: number; page: string; tag: string },
): Promise<LiveSlice> {
  const last = new Map<string, Record<string, unknown>>();
  const withPage = new Set<string>();
  for (const line of (await readFile(sourceFile, 'utf8')).split('\n')) {
    if (line === '') continue;
    const hit = JSON.parse(line) as Record<string, unknown>;
    if (hit.site_id !== slice.bigSiteId) continue;
    const session = String(hit.session_id);
    if (hit.type === 'pageview' && hit.path === slice.page) withPage.add(session);
    const seen = last.get(session);
    if (seen === undefined || Date.parse(String(hit.ts)) >= Date.parse(String(seen.ts)))
      last.set(session, hit);
  }
  const lines = [...last.values()]
    .filter((hit) => !withPage.has(String(hit.session_id)))
    .slice(0, QUEUED_SESSIONS)
    .map((hit) =>
      JSON.stringify({
        id: `${String(hit.id)}${slice.tag}`,
        ts: hit.ts,
        site_id: hit.site_id,
        session_id: hit.session_id,
        visitor_id: hit.visitor_id,
        channel: hit.channel,
        source: hit.source,
        country: hit.country,
        device: hit.device,
        browser: hit.browser,
        type: 'pageview',
        path: slice.page,
      }),
    );
  await writeFile(dest, lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return { file: dest, lines: lines.length };
}
