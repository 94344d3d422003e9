import {
  buckets,
  canonicalTimeZone,
  comparisonRange,
  isValidTimeZone,
  localDate,
  localDayNumber,
  localDayNumberStart,
  localDayStart,
  nextLocalDayStart,
  todayIn,
  offsetSegments,
  RangeError400,
  ReportRange,
  resolveRange,
} from './date-range';

const HOUR_MS = 3_600_000;

function rangeOf(from: string, to: string, zone: string): ReportRange {
  return resolveRange({ from, to, siteTimezone: zone, maxDays: 731 });
}

function errorOf(fn: () => unknown): RangeError400 {
  try {
    fn();
  } catch (error) {
    if (error instanceof RangeError400) return error;
    throw error;
  }
  throw new Error('expected a RangeError400');
}

function hoursOf(start: Date, end: Date): number {
  return (end.getTime() - start.getTime()) / HOUR_MS;
}

function expectContiguous(range: ReportRange, list: { startUtc: Date; endUtc: Date }[]): void {
  expect(list[0].startUtc).toEqual(range.startUtc);
  expect(list[list.length - 1].endUtc).toEqual(range.endUtc);
  for (let i = 1; i < list.length; i++) expect(list[i].startUtc).toEqual(list[i - 1].endUtc);
}

describe(isValidTimeZone.name, () => {
  it('accepts IANA zone names', () => {
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('Asia/Kathmandu')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
  });

  it('rejects unknown names, empty strings and bare offsets', () => {
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
    expect(isValidTimeZone('+05:30')).toBe(false);
  });
});

describe(canonicalTimeZone.name, () => {
  it('spells a zone matched in any case as the tz database does', () => {
    expect(canonicalTimeZone('asia/kathmandu')).toBe('Asia/Kathmandu');
    expect(canonicalTimeZone('ASIA/KOLKATA')).toBe('Asia/Kolkata');
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('america/port-au-prince')).toBe('America/Port-au-Prince');
    expect(canonicalTimeZone('utc')).toBe('UTC');
    expect(canonicalTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
  });

  it('keeps an alias as an alias (only the case changes)', () => {
    expect(canonicalTimeZone('asia/katmandu')).toBe('Asia/Katmandu');
  });
});

describe(resolveRange.name, () => {
  it('echoes the timezone parameter in its canonical spelling', () => {
    const range = resolveRange({ timezone: 'asia/kathmandu', siteTimezone: 'UTC', maxDays: 731 });
    expect(range.timezone).toBe('Asia/Kathmandu');
  });

  it('defaults to the trailing 30 days ending today in a zone behind UTC', () => {
    // 2026-03-15T02:00Z is 2026-03-14 19:00 PDT (UTC-7 since March 8): today = 2026-03-14;
    // from = 2026-03-14 - 29 days = 2026-02-13, which is still PST (UTC-8).
    const range = resolveRange({
      siteTimezone: 'America/Los_Angeles',
      maxDays: 731,
      now: new Date('2026-03-15T02:00:00Z'),
    });

    expect(range).toEqual({
      timezone: 'America/Los_Angeles',
      from: '2026-02-13',
      to: '2026-03-14',
      startUtc: new Date('2026-02-13T08:00:00Z'),
      endUtc: new Date('2026-03-15T07:00:00Z'),
      days: 30,
    });
  });

  it('defaults to today in a zone ahead of UTC', () => {
    // 2026-03-15T20:00Z is 2026-03-16 09:00 NZDT (UTC+13): today = 2026-03-16, from = 2026-02-15.
    const range = resolveRange({
      siteTimezone: 'Pacific/Auckland',
      maxDays: 731,
      now: new Date('2026-03-15T20:00:00Z'),
    });

    expect(range.to).toBe('2026-03-16');
    expect(range.from).toBe('2026-02-15');
    expect(range.days).toBe(30);
  });

  it('uses the timezone parameter instead of the site timezone', () => {
    // 2026-01-09T19:00Z is 2026-01-10 00:30 in Kolkata but still 2026-01-09 in UTC.
    const range = resolveRange({
      timezone: 'Asia/Kolkata',
      siteTimezone: 'UTC',
      maxDays: 731,
      now: new Date('2026-01-09T19:00:00Z'),
    });

    expect(range.timezone).toBe('Asia/Kolkata');
    expect(range.to).toBe('2026-01-10');
  });

  it('ends the range today when only from is given', () => {
    const range = resolveRange({
      from: '2026-01-01',
      siteTimezone: 'UTC',
      maxDays: 731,
      now: new Date('2026-01-20T12:00:00Z'),
    });

    expect(range.to).toBe('2026-01-20');
    expect(range.days).toBe(20);
  });

  it('starts the range 29 days before to when only to is given', () => {
    // 2026-03-01 - 28 days = 2026-02-01 (February 2026 has 28 days), - 1 more = 2026-01-31.
    const range = resolveRange({ to: '2026-03-01', siteTimezone: 'UTC', maxDays: 731 });

    expect(range.from).toBe('2026-01-31');
    expect(range.days).toBe(30);
  });

  it('starts a day in Asia/Kolkata at 18:30 UTC the day before', () => {
    const range = rangeOf('2026-01-10', '2026-01-10', 'Asia/Kolkata');

    expect(range.startUtc).toEqual(new Date('2026-01-09T18:30:00Z'));
    expect(range.endUtc).toEqual(new Date('2026-01-10T18:30:00Z'));
  });

  it('spans 25 hours on the New York fall-back day and 23 on the spring-forward day', () => {
    // 2026-11-01 starts 00:00 EDT (04:00Z) and ends 2026-11-02 00:00 EST (05:00Z).
    const fallBack = rangeOf('2026-11-01', '2026-11-01', 'America/New_York');
    // 2026-03-08 starts 00:00 EST (05:00Z) and ends 2026-03-09 00:00 EDT (04:00Z).
    const springForward = rangeOf('2026-03-08', '2026-03-08', 'America/New_York');

    expect(fallBack.startUtc).toEqual(new Date('2026-11-01T04:00:00Z'));
    expect(hoursOf(fallBack.startUtc, fallBack.endUtc)).toBe(25);
    expect(springForward.startUtc).toEqual(new Date('2026-03-08T05:00:00Z'));
    expect(hoursOf(springForward.startUtc, springForward.endUtc)).toBe(23);
  });

  it('starts a day at 01:00 where local midnight does not exist', () => {
    // America/Santiago springs forward at 2026-09-06 00:00 -04 (04:00Z) straight to 01:00 -03.
    const range = rangeOf('2026-09-06', '2026-09-06', 'America/Santiago');

    expect(range.startUtc).toEqual(new Date('2026-09-06T04:00:00Z'));
  });

  it('accepts a range of exactly maxDays days', () => {
    // 2024 (leap) has 366 days and 2025 has 365: 731 days in total.
    expect(
      resolveRange({ from: '2024-01-01', to: '2025-12-31', siteTimezone: 'UTC', maxDays: 731 }).days,
    ).toBe(731);
  });

  it('rejects a range longer than maxDays on from, naming the limit', () => {
    const error = errorOf(() =>
      resolveRange({ from: '2024-01-01', to: '2026-01-01', siteTimezone: 'UTC', maxDays: 731 }),
    );

    expect(error.parameter).toBe('from');
    expect(error.message).toContain('731');
  });

  it('rejects from after to on from', () => {
    const error = errorOf(() =>
      resolveRange({ from: '2026-02-02', to: '2026-02-01', siteTimezone: 'UTC', maxDays: 731 }),
    );

    expect(error.parameter).toBe('from');
  });

  it('rejects from after today when to defaults to today', () => {
    const error = errorOf(() =>
      resolveRange({
        from: '2026-02-02',
        siteTimezone: 'UTC',
        maxDays: 731,
        now: new Date('2026-02-01T12:00:00Z'),
      }),
    );

    expect(error.parameter).toBe('from');
  });

  it.each(['2026-2-01', '20260201', '2026-02-01T00:00', ' 2026-02-01', '', '2026/02/01'])(
    'rejects the malformed date %p on the parameter that carries it',
    (value) => {
      expect(errorOf(() => resolveRange({ from: value, siteTimezone: 'UTC', maxDays: 731 })).parameter).toBe(
        'from',
      );
      expect(errorOf(() => resolveRange({ to: value, siteTimezone: 'UTC', maxDays: 731 })).parameter).toBe(
        'to',
      );
    },
  );

  it.each(['2026-02-30', '2026-13-01', '2025-02-29', '2026-04-31', '2026-01-00'])(
    'rejects %p, which is not a real calendar date',
    (value) => {
      expect(errorOf(() => resolveRange({ from: value, siteTimezone: 'UTC', maxDays: 731 })).parameter).toBe(
        'from',
      );
      expect(errorOf(() => resolveRange({ to: value, siteTimezone: 'UTC', maxDays: 731 })).parameter).toBe(
        'to',
      );
    },
  );

  it('accepts February 29 of a leap year', () => {
    expect(rangeOf('2024-02-29', '2024-02-29', 'UTC').days).toBe(1);
  });

  it.each(['Mars/Olympus_Mons', '', '+05:30', 'EST-5'])(
    'rejects the unknown timezone %p on timezone',
    (zone) => {
      const error = errorOf(() => resolveRange({ timezone: zone, siteTimezone: 'UTC', maxDays: 731 }));

      expect(error.parameter).toBe('timezone');
    },
  );

  it('does not blame the client for an invalid site timezone', () => {
    const call = (): unknown => resolveRange({ siteTimezone: 'Nowhere/Land', maxDays: 731 });

    expect(call).toThrow('Nowhere/Land');
    expect(call).not.toThrow(RangeError400);
  });
});

describe(comparisonRange.name, () => {
  it('puts the previous period right before from, with as many days', () => {
    // 2026-03-01..31 has 31 days; it ends 2026-02-28; 2026-02-28 - 30 days = 2026-01-29.
    const previous = comparisonRange(rangeOf('2026-03-01', '2026-03-31', 'Europe/Berlin'), 'previous_period');

    expect(previous).toMatchObject({
      from: '2026-01-29',
      to: '2026-02-28',
      days: 31,
      timezone: 'Europe/Berlin',
    });
    // 2026-01-29 00:00 CET (UTC+1) is 2026-01-28T23:00Z.
    expect(previous.startUtc).toEqual(new Date('2026-01-28T23:00:00Z'));
  });

  it('counts a leap day in the previous period', () => {
    // 2024-03-01..07 is 7 days; the 7 days before are 2024-02-23..29.
    const previous = comparisonRange(rangeOf('2024-03-01', '2024-03-07', 'UTC'), 'previous_period');

    expect(previous).toMatchObject({ from: '2024-02-23', to: '2024-02-29', days: 7 });
  });

  it('takes the same dates one year earlier for year_over_year', () => {
    const lastYear = comparisonRange(
      rangeOf('2026-05-10', '2026-05-20', 'America/New_York'),
      'year_over_year',
    );

    expect(lastYear).toMatchObject({ from: '2025-05-10', to: '2025-05-20', days: 11 });
    // 2025-05-10 00:00 EDT (UTC-4).
    expect(lastYear.startUtc).toEqual(new Date('2025-05-10T04:00:00Z'));
  });

  it('maps February 29 to February 28 for year_over_year', () => {
    // 2024-02-29..2024-03-01 → 2023-02-28..2023-03-01 (two days: 2023 has no February 29).
    const lastYear = comparisonRange(rangeOf('2024-02-29', '2024-03-01', 'UTC'), 'year_over_year');

    expect(lastYear).toMatchObject({ from: '2023-02-28', to: '2023-03-01', days: 2 });
  });
});

describe(buckets.name, () => {
  it("gives the same list asked again, as objects of the caller's own", () => {
    const range = rangeOf('2026-10-25', '2026-11-07', 'America/New_York');
    for (const interval of ['hour', 'day', 'week', 'month'] as const) {
      const first = buckets(range, interval);
      const expected = first.map((b) => [b.label, b.startUtc.getTime(), b.endUtc.getTime()]);
      // A caller that changes what it got changes no later answer.
      first[0].label = 'changed';
      first[0].startUtc.setTime(0);
      first.pop();

      const again = buckets(range, interval);

      expect(again.map((b) => [b.label, b.startUtc.getTime(), b.endUtc.getTime()])).toEqual(expected);
      expectContiguous(range, again);
    }
  });

  it('gives a range with the same dates but other bounds buckets of its own bounds', () => {
    const range = rangeOf('2026-11-01', '2026-11-02', 'America/New_York');
    const whole = buckets(range, 'hour');
    // The second day only, as a rollup part of the range is (its dates kept, its bounds its own).
    const part = { ...range, startUtc: new Date('2026-11-02T05:00:00Z') };

    const list = buckets(part, 'hour');

    expect(whole).toHaveLength(49);
    expect(list).toHaveLength(24);
    expectContiguous(part, list);
  });

  it('gives 25 hour buckets on the New York fall-back day, repeating 01:00 with both offsets', () => {
    const range = rangeOf('2026-11-01', '2026-11-01', 'America/New_York');

    const list = buckets(range, 'hour');

    expect(list).toHaveLength(25);
    expect(list.slice(0, 4).map((b) => b.label)).toEqual([
      '2026-11-01T00:00:00-04:00',
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:00:00-05:00',
      '2026-11-01T02:00:00-05:00',
    ]);
    // 01:00 EDT is 05:00Z; the repeated 01:00 EST is 06:00Z.
    expect(list[1].startUtc).toEqual(new Date('2026-11-01T05:00:00Z'));
    expect(list[2].startUtc).toEqual(new Date('2026-11-01T06:00:00Z'));
    expect(list[24].label).toBe('2026-11-01T23:00:00-05:00');
    expect(list.every((b) => hoursOf(b.startUtc, b.endUtc) === 1)).toBe(true);
    expectContiguous(range, list);
  });

  it('gives 23 hour buckets on the New York spring-forward day, skipping 02:00', () => {
    const range = rangeOf('2026-03-08', '2026-03-08', 'America/New_York');

    const list = buckets(range, 'hour');

    expect(list).toHaveLength(23);
    expect(list.slice(0, 3).map((b) => b.label)).toEqual([
      '2026-03-08T00:00:00-05:00',
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
    ]);
    expectContiguous(range, list);
  });

  it('starts Asia/Kolkata hours at local :00, i.e. at :30 UTC', () => {
    const range = rangeOf('2026-01-10', '2026-01-10', 'Asia/Kolkata');

    const list = buckets(range, 'hour');

    expect(list).toHaveLength(24);
    expect(list[0]).toEqual({
      label: '2026-01-10T00:00:00+05:30',
      startUtc: new Date('2026-01-09T18:30:00Z'),
      endUtc: new Date('2026-01-09T19:30:00Z'),
    });
    expect(list[23].label).toBe('2026-01-10T23:00:00+05:30');
  });

  it('starts Asia/Kathmandu hours at local :00, i.e. at :15 UTC', () => {
    // 2026-01-10 00:00 +05:45 is 2026-01-09T18:15Z; 05:00 local is 23:15Z.
    const range = rangeOf('2026-01-10', '2026-01-10', 'Asia/Kathmandu');

    const list = buckets(range, 'hour');

    expect(list).toHaveLength(24);
    expect(list[0].label).toBe('2026-01-10T00:00:00+05:45');
    expect(list[0].startUtc).toEqual(new Date('2026-01-09T18:15:00Z'));
    expect(list[5]).toMatchObject({
      label: '2026-01-10T05:00:00+05:45',
      startUtc: new Date('2026-01-09T23:15:00Z'),
    });
    expectContiguous(range, list);
  });

  it('labels UTC hours with an explicit +00:00 offset', () => {
    expect(buckets(rangeOf('2026-01-10', '2026-01-10', 'UTC'), 'hour')[0].label).toBe(
      '2026-01-10T00:00:00+00:00',
    );
  });

  it('opens a bucket at a half-hour offset change so that a label is always its exact start', () => {
    // Australia/Lord_Howe falls back from 02:00 +11 (15:00Z) to 01:30 +10:30 on 2026-04-05: a 24.5-hour day.
    const range = rangeOf('2026-04-05', '2026-04-05', 'Australia/Lord_Howe');

    const list = buckets(range, 'hour');

    expect(list.slice(1, 4).map((b) => [b.label, hoursOf(b.startUtc, b.endUtc)])).toEqual([
      ['2026-04-05T01:00:00+11:00', 1],
      ['2026-04-05T01:30:00+10:30', 0.5],
      ['2026-04-05T02:00:00+10:30', 1],
    ]);
    expectContiguous(range, list);
  });

  it('allows hour buckets over exactly 14 days', () => {
    expect(buckets(rangeOf('2026-01-01', '2026-01-14', 'UTC'), 'hour')).toHaveLength(14 * 24);
  });

  it('rejects hour buckets over more than 14 days on interval', () => {
    const error = errorOf(() => buckets(rangeOf('2026-01-01', '2026-01-15', 'UTC'), 'hour'));

    expect(error.parameter).toBe('interval');
  });

  it('gives one day bucket per local day, 25 hours long on the fall-back day', () => {
    const range = rangeOf('2026-10-31', '2026-11-02', 'America/New_York');

    const list = buckets(range, 'day');

    expect(list.map((b) => [b.label, hoursOf(b.startUtc, b.endUtc)])).toEqual([
      ['2026-10-31', 24],
      ['2026-11-01', 25],
      ['2026-11-02', 24],
    ]);
    expectContiguous(range, list);
  });

  it('starts weeks on Monday and clips the first and last week to the range', () => {
    // 2026-11-04 is a Wednesday; the following Mondays are 11-09 and 11-16; to = 2026-11-18 (Wednesday).
    const range = rangeOf('2026-11-04', '2026-11-18', 'America/New_York');

    const list = buckets(range, 'week');

    expect(list.map((b) => b.label)).toEqual(['2026-11-04', '2026-11-09', '2026-11-16']);
    // All in EST (UTC-5): local midnights are 05:00Z; the last week ends at 2026-11-19 00:00.
    expect(list.map((b) => [b.startUtc.toISOString(), b.endUtc.toISOString()])).toEqual([
      ['2026-11-04T05:00:00.000Z', '2026-11-09T05:00:00.000Z'],
      ['2026-11-09T05:00:00.000Z', '2026-11-16T05:00:00.000Z'],
      ['2026-11-16T05:00:00.000Z', '2026-11-19T05:00:00.000Z'],
    ]);
    expectContiguous(range, list);
  });

  it('gives a single week when the range is one Monday-to-Sunday week', () => {
    expect(buckets(rangeOf('2026-11-02', '2026-11-08', 'UTC'), 'week').map((b) => b.label)).toEqual([
      '2026-11-02',
    ]);
  });

  it('labels later months by their first day and clips the first and last month', () => {
    const range = rangeOf('2026-01-15', '2026-03-10', 'Asia/Kathmandu');

    const list = buckets(range, 'month');

    expect(list.map((b) => b.label)).toEqual(['2026-01-15', '2026-02-01', '2026-03-01']);
    // 2026-02-01 00:00 +05:45 is 2026-01-31T18:15Z; the range ends 2026-03-11 00:00 local.
    expect(list[1].startUtc).toEqual(new Date('2026-01-31T18:15:00Z'));
    expect(list[2].endUtc).toEqual(new Date('2026-03-10T18:15:00Z'));
    expectContiguous(range, list);
  });
});

describe(offsetSegments.name, () => {
  it('splits a New York year at both 2026 DST changes, to the exact instant', () => {
    // Spring forward 2026-03-08 02:00 EST = 07:00Z; fall back 2026-11-01 02:00 EDT = 06:00Z.
    const range = rangeOf('2026-01-01', '2026-12-31', 'America/New_York');

    expect(offsetSegments(range.timezone, range.startUtc, range.endUtc)).toEqual([
      {
        startUtc: new Date('2026-01-01T05:00:00Z'),
        endUtc: new Date('2026-03-08T07:00:00Z'),
        offsetSeconds: -18000,
      },
      {
        startUtc: new Date('2026-03-08T07:00:00Z'),
        endUtc: new Date('2026-11-01T06:00:00Z'),
        offsetSeconds: -14400,
      },
      {
        startUtc: new Date('2026-11-01T06:00:00Z'),
        endUtc: new Date('2027-01-01T05:00:00Z'),
        offsetSeconds: -18000,
      },
    ]);
  });

  it('returns one segment with the :45 offset for Asia/Kathmandu', () => {
    const range = rangeOf('2026-01-01', '2026-12-31', 'Asia/Kathmandu');

    expect(offsetSegments(range.timezone, range.startUtc, range.endUtc)).toEqual([
      { startUtc: range.startUtc, endUtc: range.endUtc, offsetSeconds: 20700 },
    ]);
  });

  it('finds a change in the last day of the range', () => {
    // 2026-11-01 (New York) alone: EDT until 06:00Z, then EST.
    const range = rangeOf('2026-11-01', '2026-11-01', 'America/New_York');

    expect(offsetSegments(range.timezone, range.startUtc, range.endUtc).map((s) => s.offsetSeconds)).toEqual([
      -14400, -18000,
    ]);
  });

  it('returns nothing for an empty interval', () => {
    const instant = new Date('2026-01-01T00:00:00Z');

    expect(offsetSegments('UTC', instant, instant)).toEqual([]);
  });
});

describe(localDate.name, () => {
  it('gives the calendar date of an instant in the zone', () => {
    // 2026-01-09T19:00Z is 00:30 on 2026-01-10 in Kolkata (UTC+5:30).
    expect(localDate(new Date('2026-01-09T19:00:00Z'), 'Asia/Kolkata')).toBe('2026-01-10');
    expect(localDate(new Date('2026-01-09T19:00:00Z'), 'UTC')).toBe('2026-01-09');
  });
});

describe(todayIn.name, () => {
  const at = (iso: string) => new Date(iso).getTime();

  it('agrees with localDate at every instant around midnight, across a DST change and back in time', () => {
    const zones = ['America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'UTC'];
    // Minute by minute over the night of the US change to DST (2026-03-08), then backwards.
    const instants: number[] = [];
    for (let t = at('2026-03-07T22:00:00Z'); t < at('2026-03-09T08:00:00Z'); t += 60_000) instants.push(t);
    for (const zone of zones) {
      for (const t of [...instants, ...[...instants].reverse()]) {
        expect(todayIn(zone, t)).toBe(localDate(new Date(t), zone));
      }
    }
  });

  it('turns at local midnight exactly', () => {
    // Midnight of 2026-01-10 in Kolkata is 2026-01-09T18:30Z.
    expect(todayIn('Asia/Kolkata', at('2026-01-09T18:29:59.999Z'))).toBe('2026-01-09');
    expect(todayIn('Asia/Kolkata', at('2026-01-09T18:30:00.000Z'))).toBe('2026-01-10');
    expect(todayIn('Asia/Kolkata', at('2026-01-09T18:29:59.999Z'))).toBe('2026-01-09');
  });

  it('refuses an unknown zone as localDate does', () => {
    expect(() => todayIn('Mars/Olympus_Mons')).toThrow(RangeError400);
  });
});

describe(localDayNumber.name, () => {
  it('numbers each site day once and starts each number at its day start, asked again too', () => {
    for (const zone of ['America/New_York', 'America/Havana', 'Asia/Kathmandu', 'Pacific/Apia']) {
      for (let round = 0; round < 2; round++) {
        let previous: number | undefined;
        for (
          let t = Date.parse('2026-10-30T00:00:00Z');
          t < Date.parse('2026-11-04T00:00:00Z');
          t += HOUR_MS
        ) {
          const at = new Date(t);
          const day = localDayNumber(at, zone);
          const start = localDayNumberStart(day, zone);
          expect(start).toEqual(localDayStart(at, zone));
          if (previous !== undefined) expect([previous, previous + 1]).toContain(day);
          previous = day;
          // A caller that changes the Date it got changes no later answer.
          start.setTime(0);
        }
      }
    }
  });
});

describe(localDayStart.name, () => {
  it('gives the same day starts asked again, as Dates of their own', () => {
    const zones = ['America/New_York', 'America/Havana', 'Asia/Kathmandu', 'Australia/Lord_Howe'];
    // Hour by hour over the US change back from DST (2026-11-01), Havana's (midnight twice) with it.
    const instants: Date[] = [];
    for (let t = Date.parse('2026-10-31T00:00:00Z'); t < Date.parse('2026-11-03T00:00:00Z'); t += HOUR_MS)
      instants.push(new Date(t));
    for (const zone of zones) {
      const first = instants.map((at) => [localDayStart(at, zone), nextLocalDayStart(at, zone)]);
      for (const [start, next] of first) {
        expect(start.getTime()).toBeLessThan(next.getTime());
        // A caller that changes the Date it got changes no later answer.
        start.setTime(0);
        next.setTime(0);
      }
      const again = instants.map((at) => [localDayStart(at, zone), nextLocalDayStart(at, zone)]);
      instants.forEach((at, i) => {
        const [start, next] = again[i];
        expect(start.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(next.getTime()).toBeGreaterThan(at.getTime());
        // The day after a day start is the next day start: no instant falls between two days.
        expect(localDayStart(next, zone)).toEqual(next);
        expect(nextLocalDayStart(start, zone)).toEqual(next);
      });
    }
  });

  it('starts a New York day at local midnight on either side of the change', () => {
    expect(localDayStart(new Date('2026-11-01T12:00:00Z'), 'America/New_York')).toEqual(
      new Date('2026-11-01T04:00:00Z'),
    );
    expect(nextLocalDayStart(new Date('2026-11-01T12:00:00Z'), 'America/New_York')).toEqual(
      new Date('2026-11-02T05:00:00Z'),
    );
  });
});
