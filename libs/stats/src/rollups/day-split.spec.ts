import {
  buckets,
  localDayNumber,
  localDayNumberStart,
  localDayStart,
  nextLocalDayStart,
  resolveRange,
} from '../date-range';
import type { StatsQuery } from '../query/stats-query';
import { daySpanBucket, daySpanParts, rollupParts } from './day-split';
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

  it('puts a site day in the block of its span that holds it', () => {
    const block = daySpanBucket('America/New_York', 16);
    expect(block(new Date('2026-03-20T04:00:00Z')).toISOString()).toBe('2026-03-16T04:00:00.000Z');
    expect(block(new Date('2026-03-15T04:00:00Z')).toISOString()).toBe('2026-02-28T05:00:00.000Z');
  });
});
