import { localDayStart, resolveRange } from '../date-range';
import {
  attributeKey,
  attributeRollupDeltas,
  EngagedSession,
  fromMillis,
  localDayBucket,
  md5,
  PAIR_ROLLUP,
  pairRollupDeltas,
  pathRollupDeltas,
  COMBINATION_PATH_ROLLUP,
  combinationPathRollupDeltas,
  RolledUpSession,
  rollupBucket,
  rollupCovers,
  sessionRollupDeltas,
  toMillis,
} from './session-rollup';

const session = (o: Partial<RolledUpSession> = {}): RolledUpSession => ({
  started_at: new Date('2026-03-10T10:07:30.250Z'),
  channel: 'Search',
  source: 'google',
  country: 'DE',
  device: 'mobile',
  browser: 'Firefox',
  entry_path: '/',
  exit_path: '/',
  is_bounce: 1,
  pageviews: 1,
  duration_seconds: '0.000',
  ...o,
});

/** A session with its pageviews' engagement sums (the attribute rollup keeps them). */
const engaged = (o: Partial<EngagedSession> = {}): EngagedSession => ({
  ...session(),
  timed_pageviews: 1,
  time_on_page_seconds: '12.500',
  scroll_0_24: 0,
  scroll_25_49: 1,
  scroll_50_74: 0,
  scroll_75_100: 0,
  ...o,
});

describe(sessionRollupDeltas.name, () => {
  it('adds a new session to the 15-minute bucket of its start, once per attribute', () => {
    const deltas = sessionRollupDeltas([], [session()]);

    expect(deltas).toHaveLength(5);
    expect(deltas.map((d) => d.bucket.toISOString())).toEqual(Array(5).fill('2026-03-10T10:00:00.000Z'));
    expect(deltas.find((d) => d.dimension === 'country')).toMatchObject({
      value: 'DE',
      sessions: 1,
      bounces: 1,
    });
  });

  it('moves a session whose late hit changed its start and first-hit attributes', () => {
    const before = session();
    const after = session({
      started_at: new Date('2026-03-10T09:59:59.999Z'),
      channel: 'Social',
      is_bounce: 0,
      pageviews: 2,
      duration_seconds: '450.251',
    });
    const deltas = sessionRollupDeltas([before], [after]);

    const channel = deltas.filter((d) => d.dimension === 'channel');
    expect(channel).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ value: 'Search', sessions: -1, bounces: -1, sessionPageviews: -1 }),
        expect.objectContaining({
          value: 'Social',
          sessions: 1,
          bounces: 0,
          sessionPageviews: 2,
          durationMillis: 450251n,
        }),
      ]),
    );
    expect(deltas.find((d) => d.dimension === 'country' && d.sessions === 1)?.bucket.toISOString()).toBe(
      '2026-03-10T09:45:00.000Z',
    );
  });

  it('leaves out rows whose counts do not change', () => {
    expect(sessionRollupDeltas([session()], [session()])).toEqual([]);
  });
});

describe(toMillis.name, () => {
  it('reads DECIMAL strings exactly and writes them back with 3 decimals', () => {
    expect(toMillis('12.5')).toBe(12500n);
    expect(toMillis('0.001')).toBe(1n);
    expect(fromMillis(toMillis('123456789.125') - toMillis('0.125'))).toBe('123456789.000');
    expect(fromMillis(-1500n)).toBe('-1.500');
  });
});

describe(rollupCovers.name, () => {
  it('is true for local days of zones with 30- and 45-minute offsets', () => {
    for (const zone of ['Asia/Kathmandu', 'Asia/Kolkata', 'America/New_York', 'Australia/Lord_Howe']) {
      const range = resolveRange({ from: '2026-03-01', to: '2026-04-10', siteTimezone: zone, maxDays: 731 });
      expect(rollupCovers(range)).toBe(true);
    }
  });

  it('is false when a bound is not on a 15-minute boundary (local mean time)', () => {
    const range = resolveRange({
      from: '1890-01-01',
      to: '1890-01-02',
      siteTimezone: 'Europe/Amsterdam',
      maxDays: 1_000_000,
    });
    expect(rollupCovers(range)).toBe(false);
  });

  it('puts an instant in the bucket that starts at or before it', () => {
    expect(rollupBucket(new Date('2026-03-10T10:14:59.999Z')).toISOString()).toBe('2026-03-10T10:00:00.000Z');
    expect(rollupBucket(new Date('2026-03-10T10:15:00.000Z')).toISOString()).toBe('2026-03-10T10:15:00.000Z');
  });
});

describe(pathRollupDeltas.name, () => {
  it('moves a session to its new exit page and skips sessions without pageviews', () => {
    const deltas = pathRollupDeltas(
      [session({ exit_path: '/pricing' })],
      [session({ exit_path: '/thank-you' }), session({ entry_path: null, exit_path: null })],
    );

    expect(deltas).toEqual([
      expect.objectContaining({ dimension: 'exit_path', path: '/pricing', sessions: -1 }),
      expect.objectContaining({ dimension: 'exit_path', path: '/thank-you', sessions: 1 }),
    ]);
  });
});

describe(attributeRollupDeltas.name, () => {
  it('keeps one row per bucket and combination of the five attributes', () => {
    const deltas = attributeRollupDeltas(
      [],
      [engaged(), engaged({ is_bounce: 0, pageviews: 3 }), engaged({ device: 'desktop' })],
    );
    expect(deltas).toHaveLength(2);
    expect(deltas.find((d) => d.device === 'mobile')).toMatchObject({
      bucket: new Date('2026-03-10T10:00:00.000Z'),
      channel: 'Search',
      source: 'google',
      country: 'DE',
      browser: 'Firefox',
      sessions: 2,
      bounces: 1,
      sessionPageviews: 4,
      // timed pageviews, time on page in thousandths, pageviews per scroll-depth bucket
      engagement: [2n, 25000n, 0n, 2n, 0n, 0n],
    });
  });

  it('moves a re-derived session to its new combination and drops rows that net to nothing', () => {
    const deltas = attributeRollupDeltas(
      [engaged(), engaged({ country: 'FR' })],
      [engaged({ country: 'NL' }), engaged({ country: 'FR' })],
    );
    expect(deltas.map((d) => [d.country, d.sessions])).toEqual([
      ['DE', -1],
      ['NL', 1],
    ]);
  });

  it('keeps a change of the engagement sums alone, and nets the sums of a moved session', () => {
    // Same counts, duration and combination: only the time on page and scroll depth changed.
    const deltas = attributeRollupDeltas(
      [engaged({ time_on_page_seconds: '3.250', scroll_25_49: 0, scroll_75_100: 1 })],
      [engaged({ time_on_page_seconds: '4.000', timed_pageviews: 1 })],
    );
    expect(deltas).toHaveLength(1);
    expect(deltas[0]).toMatchObject({ sessions: 0, engagement: [0n, 750n, 0n, 1n, 0n, -1n] });
    const moved = attributeRollupDeltas([engaged()], [engaged({ country: 'NL' })]);
    expect(moved.map((d) => [d.country, d.engagement])).toEqual([
      ['DE', [-1n, -12500n, 0n, -1n, 0n, 0n]],
      ['NL', [1n, 12500n, 0n, 1n, 0n, 0n]],
    ]);
  });
});

describe(attributeKey.name, () => {
  it('never reads two combinations the same', () => {
    expect(attributeKey(['a:b', 'c', 'd', 'e', 'f'])).not.toBe(attributeKey(['a', 'b:c', 'd', 'e', 'f']));
    expect(attributeKey(['1:', 'x', '', '', ''])).not.toBe(attributeKey(['1', ':x', '', '', '']));
    expect(attributeKey(['é', '浏', '', '', ''])).toBe('1:é1:浏0:0:0:');
  });
});

describe(combinationPathRollupDeltas.name, () => {
  const nyDay = localDayBucket('America/New_York');
  const combination = attributeKey(['Search', 'google', 'DE', 'mobile', 'Firefox']);

  it('counts a session under its combination of attributes once for its entry and once for its exit page, in its site day', () => {
    const deltas = combinationPathRollupDeltas([], [session({ entry_path: '/a', exit_path: '/b' })], nyDay);
    const day = new Date('2026-03-10T04:00:00.000Z');
    expect(deltas).toEqual([
      { bucket: day, dimension: 'entry_path', attributes: combination, path: '/a', sessions: 1 },
      { bucket: day, dimension: 'exit_path', attributes: combination, path: '/b', sessions: 1 },
    ]);
    // Two sessions of one combination, day and page add up; one without pageviews has no row.
    const two = combinationPathRollupDeltas(
      [],
      [session(), session(), session({ entry_path: null, exit_path: null })],
      nyDay,
    );
    expect(two.map((d) => d.sessions)).toEqual([2, 2]);
  });

  it('nets a re-derived session to its change: another combination, page or day', () => {
    const before = session();
    expect(combinationPathRollupDeltas([before], [session()], nyDay)).toEqual([]);
    const moved = combinationPathRollupDeltas(
      [before],
      [session({ device: 'desktop', exit_path: '/b' })],
      nyDay,
    );
    expect(moved).toHaveLength(4);
    expect(moved.filter((d) => d.attributes === combination).map((d) => d.sessions)).toEqual([-1, -1]);
    expect(moved.find((d) => d.sessions === 1 && d.dimension === 'exit_path')).toMatchObject({
      path: '/b',
      attributes: attributeKey(['Search', 'google', 'DE', 'desktop', 'Firefox']),
    });
    // 03:59 UTC on 10 March is still 9 March in New York.
    const earlier = combinationPathRollupDeltas(
      [before],
      [session({ started_at: new Date('2026-03-10T03:59:00.000Z') })],
      nyDay,
    );
    expect(earlier.map((d) => [d.bucket.toISOString(), d.sessions])).toEqual([
      ['2026-03-10T04:00:00.000Z', -1],
      ['2026-03-10T04:00:00.000Z', -1],
      ['2026-03-09T04:00:00.000Z', 1],
      ['2026-03-09T04:00:00.000Z', 1],
    ]);
  });

  it('stores a row under the MD5 of its combination and of its page', () => {
    const [row] = combinationPathRollupDeltas([], [session({ entry_path: '/a' })], nyDay);
    expect(COMBINATION_PATH_ROLLUP.keyValues(row)).toEqual([
      'entry_path',
      md5(combination),
      row.bucket,
      md5('/a'),
    ]);
  });
});

describe(pairRollupDeltas.name, () => {
  const nyDay = localDayBucket('America/New_York');

  it('counts a session under each attribute value once per other attribute and page, in its site day', () => {
    const deltas = pairRollupDeltas([], [session({ entry_path: '/a', exit_path: '/b' })], nyDay);

    // 4 attributes × (3 other listed attributes + entry + exit page), and browser × (4 + 2)
    expect(deltas).toHaveLength(26);
    expect(deltas.some((d) => d.dimension === ('browser' as string))).toBe(false);
    // 10:07 UTC on 10 March is 06:07 in New York (EDT from 8 March): the day starts at 04:00 UTC.
    expect(new Set(deltas.map((d) => d.bucket.toISOString()))).toEqual(new Set(['2026-03-10T04:00:00.000Z']));
    expect(deltas.filter((d) => d.attribute === 'country')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ value: 'DE', dimension: 'channel', item: 'Search', sessions: 1 }),
        expect.objectContaining({ value: 'DE', dimension: 'entry_path', item: '/a', sessions: 1 }),
        expect.objectContaining({ value: 'DE', dimension: 'exit_path', item: '/b', sessions: 1 }),
      ]),
    );
    expect(deltas.some((d) => d.attribute === d.dimension)).toBe(false);
  });

  it('has no page rows for a session without pageviews, and nets a re-derived session to its change', () => {
    expect(pairRollupDeltas([], [session({ entry_path: null, exit_path: null })], nyDay)).toHaveLength(16);
    const before = session();
    const after = session({ country: 'FR' });
    const deltas = pairRollupDeltas([before], [after], nyDay);
    // Rows under country DE → FR (5 each way), and each other attribute's country item (4 each way).
    expect(deltas).toHaveLength(18);
    expect(
      deltas.find((d) => d.attribute === 'device' && d.dimension === 'country' && d.item === 'DE'),
    ).toMatchObject({
      value: 'mobile',
      sessions: -1,
    });
    expect(
      deltas.find((d) => d.attribute === 'country' && d.value === 'FR' && d.dimension === 'entry_path'),
    ).toMatchObject({ item: '/', sessions: 1 });
    expect(pairRollupDeltas([before], [session()], nyDay)).toEqual([]);
  });

  it('stores a row under the MD5 of its item', () => {
    const [row] = pairRollupDeltas([], [session({ entry_path: '/a' })], nyDay).filter(
      (d) => d.attribute === 'channel' && d.dimension === 'entry_path',
    );
    const values = PAIR_ROLLUP.keyValues(row);
    expect(values.slice(0, 4)).toEqual(['channel', 'entry_path', 'Search', row.bucket]);
    // MD5 of the UTF-8 of "/a" (`printf '/a' | md5sum`), as session_path_rollups keys a path.
    expect((values[4] as Buffer).toString('hex')).toBe('0639767f3e9eaad729b54037a7e2abf5');
    expect(values[5]).toBe('/a');
  });
});

describe(localDayBucket.name, () => {
  // DST at 02:00 (New York, Berlin), at midnight (Havana: a day without 00:00, and one with it
  // twice), by 30 minutes (Lord Howe), and offsets off the hour (Kathmandu, Chatham, St John's).
  const ZONES = [
    'America/New_York',
    'Europe/Berlin',
    'America/Havana',
    'Australia/Lord_Howe',
    'Asia/Kathmandu',
    'Pacific/Chatham',
    'America/St_Johns',
  ];
  // Around both of the year's changes, every 37 minutes, asked in a scrambled order.
  const instants = [
    ['2026-03-01T00:00:00Z', '2026-04-12T00:00:00Z'],
    ['2026-09-20T00:00:00Z', '2026-11-10T00:00:00Z'],
  ].flatMap(([from, to]) => {
    const out: Date[] = [];
    for (let t = Date.parse(from); t < Date.parse(to); t += 37 * 60_000) out.push(new Date(t));
    return out;
  });
  const scrambled = instants.map((_, i) => instants[(i * 7919) % instants.length]);

  it.each(ZONES)('is the site day start of every instant, asked in any order (%s)', (zone) => {
    const bucketOf = localDayBucket(zone);
    const wrong = scrambled.filter((at) => bucketOf(at).getTime() !== localDayStart(at, zone).getTime());
    expect(wrong.map((at) => at.toISOString())).toEqual([]);
  });
});
