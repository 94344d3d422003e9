import {
  buckets,
  localDayNumber,
  localDayNumberStart,
  localDayStart,
  nextLocalDayStart,
  resolveRange,
} from '../date-range';
import type { StatsQuery } from '../query/stats-query';
import {
  daySpanBucket,
  daySpanParts,
  partBuckets,
  rollupParts,
  rollupSpanParts,
  spanDeltas,
} from './day-split';
import { localDayBucket } from './session-rollup';

const query = (siteZone: string, from: string, to: string, timezone?: string): StatsQuery => ({
  site: { id: 1, timezone: siteZone, currency: 'USD', trackingMode: 'full' },
  range: resolveRange({ from, to, timezone, siteTimezone: siteZone, maxDays: 731 }),
  filters: [],
});

const spans = (parts: ReturnType<typeof rollupParts>) =>
  parts.map((p) => [p.table, p.query.range.startUtc.toISOString(), p.query.range.endUtc.toISOString()]);

describe('rollupParts: whole site days from day rows', () => {
  it('reads a range in the site zone from day rows alone, across a DST change', () => {
    const q = query('America/New_York', '2026-03-01', '2026-03-31');
    expect(spans(rollupParts(q, 'quarter', 'day'))).toEqual([
      ['day', '2026-03-01T05:00:00.000Z', '2026-04-01T04:00:00.000Z'],
    ]);
  });

  it('reads the quarter hours around the site days of a range in another zone', () => {
    const q = query('America/New_York', '2026-03-01', '2026-03-03', 'UTC');
    expect(spans(rollupParts(q, 'quarter', 'day'))).toEqual([
      ['day', '2026-03-01T05:00:00.000Z', '2026-03-03T05:00:00.000Z'],
      ['quarter', '2026-03-01T00:00:00.000Z', '2026-03-01T05:00:00.000Z'],
      ['quarter', '2026-03-03T05:00:00.000Z', '2026-03-04T00:00:00.000Z'],
    ]);
  });

  it('reads UTC day rows where they are by UTC day (item_day_rollups)', () => {
    const q = query('Asia/Kathmandu', '2026-03-01', '2026-03-02');
    expect(spans(rollupParts(q, 'quarter', 'day', { zone: 'UTC' }))).toEqual([
      ['day', '2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z'],
      ['quarter', '2026-02-28T18:15:00.000Z', '2026-03-01T00:00:00.000Z'],
      ['quarter', '2026-03-02T00:00:00.000Z', '2026-03-02T18:15:00.000Z'],
    ]);
  });

  it('reads quarter hours only when a range holds no whole day', () => {
    const q = query('Asia/Kathmandu', '2026-03-01', '2026-03-01', 'Europe/Berlin');
    expect(spans(rollupParts(q, 'quarter', 'day'))).toEqual([
      ['quarter', '2026-02-28T23:00:00.000Z', '2026-03-01T23:00:00.000Z'],
    ]);
  });

  it('serves report buckets that are whole site days, and no bucket that starts inside one', () => {
    const q = query('Europe/Berlin', '2026-03-23', '2026-04-05');
    for (const interval of ['day', 'week', 'month'] as const) {
      expect(rollupParts(q, 'quarter', 'day', { buckets: buckets(q.range, interval) })).toHaveLength(1);
    }
    expect(spans(rollupParts(q, 'quarter', 'day', { buckets: buckets(q.range, 'hour') }))).toEqual([
      ['quarter', q.range.startUtc.toISOString(), q.range.endUtc.toISOString()],
    ]);
    // Days of another zone start inside the site's days.
    const utc = query('Europe/Berlin', '2026-03-23', '2026-04-05', 'UTC');
    expect(rollupParts(utc, 'quarter', 'day', { buckets: buckets(utc.range, 'day') })).toHaveLength(1);
    expect(rollupParts(utc, 'quarter', 'day')).toHaveLength(3);
  });
});

describe('localDayBucket', () => {
  it.each(['America/New_York', 'Asia/Kathmandu', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/Havana'])(
    'gives every instant the start of its day in %s, as report days start',
    (zone) => {
      const bucketOf = localDayBucket(zone);
      // Every 5 minutes over spring and autumn DST changes of both hemispheres.
      for (const [from, to] of [
        ['2026-03-06', '2026-03-10'],
        ['2026-04-03', '2026-04-06'],
        ['2026-10-03', '2026-10-06'],
        ['2026-10-30', '2026-11-03'],
      ]) {
        const range = resolveRange({ from, to, siteTimezone: zone, maxDays: 731 });
        for (const day of buckets(range, 'day')) {
          for (let t = day.startUtc.getTime(); t < day.endUtc.getTime(); t += 5 * 60_000) {
            expect(bucketOf(new Date(t))).toEqual(day.startUtc);
          }
        }
      }
    },
  );
});

describe('daySpanParts: whole site days as aligned blocks', () => {
  const iso = (parts: ReturnType<typeof daySpanParts>) =>
    parts.map((p) => [p.span, p.from.toISOString(), p.to.toISOString()]);

  it('reads March (days 20513–20543 since 1970) as 3 days, three 4-day blocks and a 16-day block, across a DST change', () => {
    const q = query('America/New_York', '2026-03-01', '2026-03-31');
    expect(iso(daySpanParts(q.range.startUtc, q.range.endUtc, 'America/New_York'))).toEqual([
      [1, '2026-03-01T05:00:00.000Z', '2026-03-04T05:00:00.000Z'],
      [4, '2026-03-04T05:00:00.000Z', '2026-03-16T04:00:00.000Z'],
      [16, '2026-03-16T04:00:00.000Z', '2026-04-01T04:00:00.000Z'],
    ]);
  });

  it('keeps single days where no block fits, and blocks by the local calendar in +05:45', () => {
    const nyc = query('America/New_York', '2026-03-05', '2026-03-09');
    expect(iso(daySpanParts(nyc.range.startUtc, nyc.range.endUtc, 'America/New_York'))).toEqual([
      [1, '2026-03-05T05:00:00.000Z', '2026-03-10T04:00:00.000Z'],
    ]);
    const ktm = query('Asia/Kathmandu', '2026-02-26', '2026-03-20');
    expect(iso(daySpanParts(ktm.range.startUtc, ktm.range.endUtc, 'Asia/Kathmandu'))).toEqual([
      [1, '2026-02-25T18:15:00.000Z', '2026-02-27T18:15:00.000Z'],
      [16, '2026-02-27T18:15:00.000Z', '2026-03-15T18:15:00.000Z'],
      [4, '2026-03-15T18:15:00.000Z', '2026-03-19T18:15:00.000Z'],
      [1, '2026-03-19T18:15:00.000Z', '2026-03-20T18:15:00.000Z'],
    ]);
  });

  it.each(['America/New_York', 'America/Havana', 'Asia/Kathmandu', 'Australia/Lord_Howe'])(
    'numbers every site day of 2026 and back to its start (%s)',
    (zone) => {
      let day = localDayStart(new Date('2026-01-01T12:00:00Z'), zone);
      for (let i = 0; i < 365; i++) {
        expect(localDayNumberStart(localDayNumber(day, zone), zone)).toEqual(day);
        const next = nextLocalDayStart(day, zone);
        expect(localDayNumber(next, zone)).toBe(localDayNumber(day, zone) + 1);
        day = next;
      }
    },
  );

  it('lists the buckets of each part: every site day of a day part, each block start of a span part', () => {
    const q = query('America/New_York', '2026-03-01', '2026-03-31');
    const parts = rollupSpanParts(q, 'quarter', 'day', 'span');
    expect(
      parts.map((p) => [p.span, partBuckets(p, 'America/New_York').map((b) => b.toISOString())]),
    ).toEqual([
      [0, ['2026-03-01T05:00:00.000Z', '2026-03-02T05:00:00.000Z', '2026-03-03T05:00:00.000Z']],
      // Across the DST change of March 8: the blocks' starts move from 05:00 to 04:00 UTC.
      [4, ['2026-03-04T05:00:00.000Z', '2026-03-08T05:00:00.000Z', '2026-03-12T04:00:00.000Z']],
      [16, ['2026-03-16T04:00:00.000Z']],
    ]);
  });

  it('puts a site day in the block of its span that holds it', () => {
    const block = daySpanBucket('America/New_York', 16);
    expect(block(new Date('2026-03-20T04:00:00Z')).toISOString()).toBe('2026-03-16T04:00:00.000Z');
    expect(block(new Date('2026-03-15T04:00:00Z')).toISOString()).toBe('2026-02-28T05:00:00.000Z');
  });

  it('sums the day changes of a key into each block of each span that holds them, and drops blocks left unchanged', () => {
    const zone = 'America/New_York';
    const blockOf = (span: number) => daySpanBucket(zone, span);
    // 2026-03-15 and 2026-03-16 are in different 4- and 16-day blocks, in the same 64-day one.
    const mar15 = new Date('2026-03-15T04:00:00Z');
    const mar16 = new Date('2026-03-16T04:00:00Z');
    const days = [
      { bucket: mar15, key: 'source\u0000google', sessions: 2 },
      { bucket: mar16, key: 'source\u0000google', sessions: -2 },
      { bucket: mar16, key: 'source\u0000google', sessions: 5 },
      { bucket: mar16, key: 'source\u0000bing', sessions: 1 },
    ];
    const rows = spanDeltas(days, blockOf, (d) => d.key)
      .map((r) => [r.span, r.bucket.toISOString(), r.key, r.sessions])
      .sort((a, b) => String(a).localeCompare(String(b)));
    const block = (span: number, day: Date) => blockOf(span)(day).toISOString();
    expect(rows).toEqual(
      [
        [4, block(4, mar15), 'source\u0000google', 2],
        [4, block(4, mar16), 'source\u0000google', 3],
        [4, block(4, mar16), 'source\u0000bing', 1],
        [16, block(16, mar15), 'source\u0000google', 2],
        [16, block(16, mar16), 'source\u0000google', 3],
        [16, block(16, mar16), 'source\u0000bing', 1],
        [64, block(64, mar16), 'source\u0000google', 5],
        [64, block(64, mar16), 'source\u0000bing', 1],
      ].sort((a, b) => String(a).localeCompare(String(b))),
    );
    expect(block(64, mar15)).toBe(block(64, mar16));
    // A change that nets to nothing in a block leaves no row.
    expect(spanDeltas([days[0], { ...days[0], sessions: -2 }], blockOf, (d) => d.key)).toEqual([]);
  });
});
