import { HitRejection, parseHitLine, parseMoney } from './hit-parser';
import type { SiteFacts } from './hit';

const sites = new Map<number, SiteFacts>([[1, { id: 1, currency: 'EUR' }]]);
const site = (id: number) => sites.get(id);
const line = (o: Record<string, unknown>) => JSON.stringify(o);
const base = {
  id: 'h1',
  type: 'pageview',
  site_id: 1,
  ts: '2026-03-01T10:00:00Z',
  session_id: 's1',
  visitor_id: 'v1',
  path: '/',
};

const reason = (text: string): string => {
  try {
    parseHitLine(text, site);
  } catch (e) {
    if (e instanceof HitRejection) return e.message;
    throw e;
  }
  return 'accepted';
};

describe(parseHitLine.name, () => {
  it('parses a pageview with every field', () => {
    const hit = parseHitLine(
      line({
        ...base,
        channel: 'Email',
        source: 'nl',
        country: 'DE',
        device: 'mobile',
        browser: 'Firefox',
        time_on_page_seconds: 12.5,
        scroll_depth: 80,
      }),
      site,
    );
    expect(hit).toMatchObject({
      id: 'h1',
      type: 'pageview',
      siteId: 1,
      sessionId: 's1',
      visitorId: 'v1',
      path: '/',
      channel: 'Email',
      source: 'nl',
      timeOnPageSeconds: 12.5,
      scrollDepth: 80,
    });
    expect(hit.ts.toISOString()).toBe('2026-03-01T10:00:00.000Z');
  });

  it('stores timestamps with offsets in UTC, to the millisecond', () => {
    expect(parseHitLine(line({ ...base, ts: '2026-03-01T15:30:00.1234+05:30' }), site).ts.toISOString()).toBe(
      '2026-03-01T10:00:00.123Z',
    );
  });

  it('takes the last day of a month and a leap day', () => {
    for (const ts of ['2026-04-30T23:59:59Z', '2026-12-31T00:00:00Z', '2028-02-29T12:00:00Z']) {
      expect(parseHitLine(line({ ...base, ts }), site).ts.toISOString()).toBe(ts.replace('Z', '.000Z'));
    }
  });

  it('reads a UTC timestamp as new Date() does, to the millisecond, and refuses the same ones', () => {
    const texts = [
      '2026-03-01T10:00Z',
      '2026-03-01T10:00:07Z',
      '2026-03-01T10:00:07.5Z',
      '2026-03-01T10:00:07.05Z',
      '2026-03-01T10:00:07.999Z',
      '2026-03-01T10:00:07.9999999Z',
      '1970-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
      '2024-02-29T00:00:00Z',
    ];
    for (const ts of texts) {
      expect(parseHitLine(line({ ...base, ts }), site).ts.getTime()).toBe(new Date(ts).getTime());
    }
    expect(reason(line({ ...base, ts: '2026-03-01T24:00:00Z' }))).toBe(
      'ts is not a valid calendar date and time',
    );
    expect(reason(line({ ...base, ts: '2026-03-01T10:60:00Z' }))).toBe('ts is not a valid timestamp');
    expect(reason(line({ ...base, ts: '2025-02-29T10:00:00Z' }))).toBe(
      'ts is not a valid calendar date and time',
    );
    expect(reason(line({ ...base, ts: '0099-03-01T10:00:00Z' }))).toBe('ts must be between 1970 and 9999');
    expect(reason(line({ ...base, ts: '1969-12-31T23:59:59.999Z' }))).toBe(
      'ts must be between 1970 and 9999',
    );
  });

  it('treats empty attributes as missing', () => {
    expect(parseHitLine(line({ ...base, channel: '' }), site).channel).toBeNull();
  });

  it('counts lengths in characters: 64 emoji (128 UTF-16 units) are a valid id, 65 are not', () => {
    const line = (id: string) => JSON.stringify({ ...base, id });
    expect(parseHitLine(line('😀'.repeat(64)), site).id).toBe('😀'.repeat(64));
    expect(() => parseHitLine(line('😀'.repeat(65)), site)).toThrow('id must be 1–64 characters');
    // A lone surrogate (JSON allows the escape) is one character too.
    expect(parseHitLine(line('\uD800' + 'x'.repeat(63)), site).id).toHaveLength(64);
  });

  it('ignores unknown fields so that a newer tracker can add some', () => {
    expect(reason(line({ ...base, referrer_full: 'x' }))).toBe('accepted');
  });

  it('parses a purchase with items, money as exact decimal strings, and the site currency by default', () => {
    const hit = parseHitLine(
      line({
        ...base,
        type: 'purchase',
        path: undefined,
        order_id: 'o1',
        revenue: 0.1,
        items: [{ sku: 'A', quantity: 2, price: '0.05' }],
      }),
      site,
    );
    expect(hit).toMatchObject({ orderId: 'o1', revenue: '0.10', currency: 'EUR', path: null });
    expect(hit.items).toEqual([{ sku: 'A', name: null, quantity: 2, price: '0.05' }]);
  });

  it.each<[string, Record<string, unknown> | string, string]>([
    ['malformed JSON', '{"id":', 'malformed JSON'],
    ['an array', '[1]', 'a hit must be a JSON object'],
    ['a missing id', { ...base, id: undefined }, 'id is required'],
    ['a 65-character id', { ...base, id: 'x'.repeat(65) }, 'id must be 1–64 characters'],
    ['an unknown type', { ...base, type: 'click' }, 'type must be pageview, event or purchase'],
    ['an unknown site', { ...base, site_id: 2 }, 'site 2 does not exist'],
    ['a fractional site id', { ...base, site_id: 1.5 }, 'site_id must be a positive integer'],
    [
      'a timestamp without zone',
      { ...base, ts: '2026-03-01T10:00:00' },
      'ts must be an ISO 8601 timestamp with Z or an offset, e.g. 2026-11-01T12:00:00Z',
    ],
    [
      'an impossible date',
      { ...base, ts: '2026-02-29T10:00:00Z' },
      'ts is not a valid calendar date and time',
    ],
    ...['2026-04-31T10:00:00Z', '2026-03-00T10:00:00Z', '2026-13-01T10:00:00Z', '2026-03-01T24:00:00Z'].map(
      (ts): [string, Record<string, unknown>, string] => [
        `an impossible date or time (${ts})`,
        { ...base, ts },
        ts.startsWith('2026-13') || ts.startsWith('2026-03-00')
          ? 'ts is not a valid timestamp'
          : 'ts is not a valid calendar date and time',
      ],
    ),
    ['a pageview without path', { ...base, path: undefined }, 'path is required'],
    ['a relative path', { ...base, path: 'index.html' }, 'path must start with /'],
    [
      'a negative time on page',
      { ...base, time_on_page_seconds: -1 },
      'time_on_page_seconds must be a number ≥ 0',
    ],
    ['a scroll depth of 101', { ...base, scroll_depth: 101 }, 'scroll_depth must be an integer 0–100'],
    ['an event without name', { ...base, type: 'event' }, 'name is required'],
    [
      'a purchase in another currency',
      { ...base, type: 'purchase', order_id: 'o', revenue: '1', currency: 'USD' },
      "currency USD differs from the site's currency EUR",
    ],
    ['a purchase without order id', { ...base, type: 'purchase', revenue: '1' }, 'order_id is required'],
    [
      'an item without quantity',
      { ...base, type: 'purchase', order_id: 'o', revenue: '1', items: [{ sku: 'A', price: '1' }] },
      'items[0].quantity must be an integer 0–1000000',
    ],
    [
      'an item with a bad price',
      {
        ...base,
        type: 'purchase',
        order_id: 'o',
        revenue: '1',
        items: [{ sku: 'A', quantity: 1, price: '1.999' }],
      },
      'items[0].price must be ≥ 0 with at most 2 decimals (got "1.999")',
    ],
  ])('rejects %s', (_, input, expected) => {
    expect(reason(typeof input === 'string' ? input : line(input))).toBe(expected);
  });
});

describe(parseMoney.name, () => {
  it.each<[unknown, string]>([
    ['10', '10.00'],
    ['10.5', '10.50'],
    ['0010.05', '10.05'],
    [0.1, '0.10'],
    [19.99, '19.99'],
    [0, '0.00'],
  ])('%p → %s', (input, expected) => {
    expect(parseMoney(input, 'revenue')).toBe(expected);
  });

  it.each<[unknown]>([[-1], ['-1'], ['1.001'], [0.1 + 0.2], ['1e3'], [Infinity], [null], ['']])(
    'rejects %p',
    (input) => {
      expect(() => parseMoney(input, 'revenue')).toThrow(HitRejection);
    },
  );
});
