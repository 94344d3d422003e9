import { Hit, HIT_TYPES, HitType, OrderItem, SiteFacts } from './hit';

export class HitRejection extends Error {}

const TS_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:?\d{2})$/;
const MONEY_PATTERN = /^\d{1,13}(\.\d{1,2})?$/;
const MAX_ITEMS = 1000;

const SURROGATE = /[\uD800-\uDFFF]/;
/** Characters (code points) of `s`: its UTF-16 length unless it holds a surrogate. */
const length = (s: string) => (SURROGATE.test(s) ? Array.from(s).length : s.length);

function fail(message: string): never {
  throw new HitRejection(message);
}

function str(obj: Record<string, unknown>, field: string, min: number, max: number, required: true): string;
function str(
  obj: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
  required: false,
): string | null;
function str(
  obj: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
  required: boolean,
): string | null;
function str(
  obj: Record<string, unknown>,
  field: string,
  min: number,
  max: number,
  required: boolean,
): string | null {
  const v = obj[field];
  if (v === undefined || v === null) {
    if (required) fail(`${field} is required`);
    return null;
  }
  if (typeof v !== 'string') fail(`${field} must be a string`);
  const n = length(v);
  if (n < min || n > max)
    fail(min === max ? `${field} must be ${min} characters` : `${field} must be ${min}–${max} characters`);
  return v;
}

function parseTimestamp(v: unknown): Date {
  if (typeof v !== 'string') fail('ts must be an ISO 8601 timestamp string');
  const m = TS_PATTERN.exec(v);
  if (!m) fail('ts must be an ISO 8601 timestamp with Z or an offset, e.g. 2026-11-01T12:00:00Z');
  const [, y, mo, d, h, mi, s, fraction, zone] = m;
  // The common text, in UTC with fields in range, built from the fields the pattern read: the
  // Date new Date(v) gives (fraction digits past the milliseconds dropped), for a third of its
  // cost. Anything else is parsed by new Date(v) and checked below.
  if (
    zone === 'Z' &&
    +y >= 1970 &&
    +h <= 23 &&
    +mi <= 59 &&
    (s === undefined || +s <= 59) &&
    isCalendarDay(+y, +mo, +d)
  ) {
    const ms = fraction === undefined ? 0 : +fraction.slice(0, 3).padEnd(3, '0');
    return new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, s === undefined ? 0 : +s, ms));
  }
  const date = new Date(v);
  if (Number.isNaN(date.getTime())) fail('ts is not a valid timestamp');
  if (+h > 23 || +mi > 59 || (s !== undefined && +s > 59) || !isCalendarDay(+y, +mo, +d)) {
    fail('ts is not a valid calendar date and time');
  }
  const year = date.getUTCFullYear();
  if (year < 1970 || year > 9999) fail('ts must be between 1970 and 9999');
  // A Date holds whole milliseconds: further digits of the fraction are dropped.
  return date;
}

/** Whether month `mo` (1–12) of year `y` has a day `d`. new Date() rolls 2026-02-30 over to March. */
function isCalendarDay(y: number, mo: number, d: number): boolean {
  if (mo < 1 || mo > 12 || d < 1) return false;
  if (d <= 28) return true;
  const probe = new Date(Date.UTC(y, mo - 1, d));
  return probe.getUTCDate() === d && probe.getUTCMonth() === mo - 1;
}

/** Money as a decimal string with at most 2 decimals, normalised to exactly 2 ("5" → "5.00"). */
export function parseMoney(v: unknown, field: string): string {
  let text: string;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) fail(`${field} must be a number ≥ 0`);
    text = String(v);
  } else if (typeof v === 'string') {
    text = v;
  } else {
    fail(`${field} must be a decimal string or a number`);
  }
  if (!MONEY_PATTERN.test(text))
    fail(`${field} must be ≥ 0 with at most 2 decimals (got ${JSON.stringify(v).slice(0, 40)})`);
  const [int, frac = ''] = text.split('.');
  return `${BigInt(int).toString()}.${frac.padEnd(2, '0')}`;
}

function parseItems(v: unknown): OrderItem[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail('items must be an array');
  if (v.length > MAX_ITEMS) fail(`items must have at most ${MAX_ITEMS} entries`);
  return v.map((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(`items[${i}] must be an object`);
    const item = raw as Record<string, unknown>;
    const quantity = item.quantity;
    if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 0 || quantity > 1_000_000) {
      fail(`items[${i}].quantity must be an integer 0–1000000`);
    }
    try {
      return {
        sku: str(item, 'sku', 1, 255, true),
        name: str(item, 'name', 0, 255, false),
        quantity,
        price: parseMoney(item.price, 'price'),
      };
    } catch (e) {
      if (e instanceof HitRejection) fail(`items[${i}].${e.message}`);
      throw e;
    }
  });
}

/**
 * Validates one decoded NDJSON value against the hit format of SPEC §1. `site` is the site
 * named by `site_id`, or undefined when it does not exist. Unknown fields are ignored so that
 * a newer tracker can add fields without breaking imports.
 */
export function parseHit(value: unknown, site: (id: number) => SiteFacts | undefined): Hit {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('a hit must be a JSON object');
  const o = value as Record<string, unknown>;

  const id = str(o, 'id', 1, 64, true);
  const type = o.type;
  if (typeof type !== 'string' || !(HIT_TYPES as readonly string[]).includes(type)) {
    fail('type must be pageview, event or purchase');
  }
  const siteId = o.site_id;
  if (typeof siteId !== 'number' || !Number.isInteger(siteId) || siteId < 1)
    fail('site_id must be a positive integer');
  const facts = site(siteId);
  if (!facts) fail(`site ${siteId} does not exist`);

  const hit: Hit = {
    id,
    type: type as HitType,
    siteId,
    ts: parseTimestamp(o.ts),
    sessionId: str(o, 'session_id', 1, 64, true),
    visitorId: str(o, 'visitor_id', 1, 64, true),
    path: null,
    channel: str(o, 'channel', 0, 255, false) || null,
    source: str(o, 'source', 0, 255, false) || null,
    country: str(o, 'country', 0, 255, false) || null,
    device: str(o, 'device', 0, 255, false) || null,
    browser: str(o, 'browser', 0, 255, false) || null,
    timeOnPageSeconds: null,
    scrollDepth: null,
    name: null,
    orderId: null,
    revenue: null,
    currency: null,
    items: [],
  };

  const path = str(o, 'path', 1, 2048, hit.type === 'pageview');
  if (path !== null && !path.startsWith('/')) fail('path must start with /');
  hit.path = path;

  if (hit.type === 'pageview') {
    const top = o.time_on_page_seconds;
    if (top !== undefined && top !== null) {
      if (typeof top !== 'number' || !Number.isFinite(top) || top < 0 || top > 1e9) {
        fail('time_on_page_seconds must be a number ≥ 0');
      }
      hit.timeOnPageSeconds = Math.round(top * 1000) / 1000;
    }
    const depth = o.scroll_depth;
    if (depth !== undefined && depth !== null) {
      if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 0 || depth > 100) {
        fail('scroll_depth must be an integer 0–100');
      }
      hit.scrollDepth = depth;
    }
  } else if (hit.type === 'event') {
    hit.name = str(o, 'name', 1, 255, true);
  } else {
    hit.orderId = str(o, 'order_id', 1, 255, true);
    hit.revenue = parseMoney(o.revenue, 'revenue');
    const currency = o.currency ?? facts.currency;
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
      fail('currency must be an ISO 4217 code such as EUR');
    if (currency !== facts.currency)
      fail(`currency ${currency} differs from the site's currency ${facts.currency}`);
    hit.currency = currency;
    hit.items = parseItems(o.items);
  }
  return hit;
}

/** Decodes and validates one NDJSON line. Throws HitRejection with the reason. */
export function parseHitLine(line: string, site: (id: number) => SiteFacts | undefined): Hit {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    fail('malformed JSON');
  }
  return parseHit(value, site);
}
