import { LRUCache } from 'lru-cache';
import { DateTime, IANAZone } from 'luxon';
import { ParameterError } from './parameter-error';

export type Interval = 'hour' | 'day' | 'week' | 'month';

export interface ReportRange {
  timezone: string;
  from: string;
  to: string;
  startUtc: Date;
  /** Exclusive: local midnight starting the day after `to`. */
  endUtc: Date;
  days: number;
}

export interface Bucket {
  label: string;
  startUtc: Date;
  /** Exclusive. */
  endUtc: Date;
}

export interface OffsetSegment {
  startUtc: Date;
  /** Exclusive. */
  endUtc: Date;
  /** local = utc + offsetSeconds */
  offsetSeconds: number;
}

/** A client mistake in a range or interval parameter; `parameter` names the offending query parameter. */
export class RangeError400 extends ParameterError {
  constructor(parameter: string, message: string) {
    super(parameter, message);
    this.name = 'RangeError400';
  }
}

/** The longest range, in days, that `hour` buckets are offered for. */
export const HOURLY_MAX_DAYS = 14;

const TRAILING_DAYS = 30;
const DAY_SECONDS = 86_400;
const HOUR_SECONDS = 3600;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Names already found valid. Luxon checks a name by building an Intl.DateTimeFormat, about 0.1 ms
 * each time, and every report request checks its zone at least twice (6 % of a cache hit's CPU).
 * Bounded: a client could send endless spellings ("asia/kathmandu", "ASIA/Kathmandu"…).
 */
const VALID_ZONES = new Set<string>();
const VALID_ZONES_MAX = 2000;

export function isValidTimeZone(zone: string): boolean {
  if (VALID_ZONES.has(zone)) return true;
  // Newer Intl versions accept offset identifiers such as '+05:30'; only IANA names are allowed here.
  const valid = /^[A-Za-z]/.test(zone) && IANAZone.isValidZone(zone);
  if (valid && VALID_ZONES.size < VALID_ZONES_MAX) VALID_ZONES.add(zone);
  return valid;
}

/**
 * The tz database's current names of the zones that ICU (and so `Intl`) still lists under an
 * older name: `Intl.supportedValuesOf('timeZone')` has `Asia/Katmandu`, not `Asia/Kathmandu`.
 */
const CURRENT_NAMES = [
  'Africa/Asmara',
  'America/Argentina/Buenos_Aires',
  'America/Argentina/Catamarca',
  'America/Argentina/Cordoba',
  'America/Argentina/Jujuy',
  'America/Argentina/Mendoza',
  'America/Atikokan',
  'America/Indiana/Indianapolis',
  'America/Kentucky/Louisville',
  'America/Nuuk',
  'Asia/Ho_Chi_Minh',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Yangon',
  'Atlantic/Faroe',
  'Europe/Kyiv',
  'Pacific/Chuuk',
  'Pacific/Kanton',
  'Pacific/Pohnpei',
];

let zoneNames: Map<string, string> | undefined;

/**
 * Day starts already worked out, by zone and local date (DAY_STARTS) or by zone and instant (the
 * other two). Each costs Luxon several passes through the zone's rules (Intl), and a report over
 * 30 days asks for the same few dozen of them for its range, its buckets and the parts of each
 * rollup it reads: Luxon took ~1.0 ms of a breakdown request's ~2.4 ms of CPU at 1M, ~0.2 after
 * (BENCHMARKS.md run AQ).
 * The answers depend on the tz database alone, so they stay true; bounded, as a client picks the
 * ranges.
 */
const MEMO_ENTRIES = 20_000;
const DAY_STARTS = new LRUCache<string, number>({ max: MEMO_ENTRIES });
const LOCAL_DAY_STARTS = new LRUCache<string, number>({ max: MEMO_ENTRIES });
const NEXT_LOCAL_DAY_STARTS = new LRUCache<string, number>({ max: MEMO_ENTRIES });
/** By zone and instant: localDayNumber. By zone and day number: localDayNumberStart. */
const LOCAL_DAY_NUMBERS = new LRUCache<string, number>({ max: MEMO_ENTRIES });
const DAY_NUMBER_STARTS = new LRUCache<string, number>({ max: MEMO_ENTRIES });

/** `compute()` through `memo`. */
function rememberedNumber(memo: LRUCache<string, number>, key: string, compute: () => number): number {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute();
    memo.set(key, value);
  }
  return value;
}

/** `compute()` through `memo`, as a Date of its own (a caller may change the Date it gets). */
function remembered(memo: LRUCache<string, number>, key: string, compute: () => Date): Date {
  return new Date(rememberedNumber(memo, key, () => compute().getTime()));
}

/**
 * The spelling the tz database gives a zone name that was matched case-insensitively
 * (`asia/kathmandu` → `Asia/Kathmandu`, `utc` → `UTC`), so reports echo a name clients can
 * compare. A name neither list knows (a rare alias) is returned as given.
 */
export function canonicalTimeZone(zone: string): string {
  zoneNames ??= new Map(
    [...Intl.supportedValuesOf('timeZone'), ...CURRENT_NAMES, 'UTC'].map((name) => [
      name.toLowerCase(),
      name,
    ]),
  );
  return zoneNames.get(zone.toLowerCase()) ?? zone;
}

/**
 * SPEC §3: the trailing 30 days ending today in the report zone unless `from`/`to` say otherwise.
 * Throws RangeError400 on 'from', 'to' or 'timezone' for every client mistake.
 */
export function resolveRange(input: {
  from?: string;
  to?: string;
  timezone?: string;
  siteTimezone: string;
  maxDays: number;
  now?: Date;
}): ReportRange {
  const given = input.timezone ?? input.siteTimezone;
  if (!isValidTimeZone(given)) {
    if (input.timezone === undefined) throw new Error(`site timezone '${given}' is not a valid IANA zone`);
    throw new RangeError400('timezone', `timezone '${given}' is not a known IANA time zone`);
  }
  const zone = canonicalTimeZone(given);
  const from = input.from === undefined ? undefined : parseDay(input.from, 'from');
  const to = input.to === undefined ? undefined : parseDay(input.to, 'to');

  // todayIn: localDate of the moment, worked out once per zone and day.
  const today = calendarDay(todayIn(zone, (input.now ?? new Date()).getTime()));
  const end = to ?? today;
  const start = from ?? end.minus({ days: TRAILING_DAYS - 1 });
  if (start > end) {
    throw new RangeError400('from', `from (${isoDay(start)}) must not be after to (${isoDay(end)})`);
  }
  const range = makeRange(zone, start, end);
  if (range.days > input.maxDays) {
    throw new RangeError400(
      'from',
      `the range ${range.from} to ${range.to} spans ${range.days} days; at most ${input.maxDays} days are allowed`,
    );
  }
  return range;
}

/** previous_period: as many days, ending the day before `from`; year_over_year: the same dates a year earlier. */
export function comparisonRange(range: ReportRange, mode: 'previous_period' | 'year_over_year'): ReportRange {
  const from = calendarDay(range.from);
  const to = calendarDay(range.to);
  if (mode === 'previous_period') {
    const previousTo = from.minus({ days: 1 });
    return makeRange(range.timezone, previousTo.minus({ days: range.days - 1 }), previousTo);
  }
  // Luxon clamps Feb 29 to Feb 28 when the target year is not a leap year.
  return makeRange(range.timezone, from.minus({ years: 1 }), to.minus({ years: 1 }));
}

/**
 * Bucket lists already worked out, by zone, dates, bounds and interval, as their labels and
 * bounds: a dashboard asks for the same few ranges again and again, and a list by day cost Luxon
 * ~0.5 ms of a breakdown request at 1M (BENCHMARKS.md run BK). Bounded by the buckets held (a
 * 731-day range by day holds 731).
 */
const BUCKET_LISTS = new LRUCache<string, ReadonlyArray<readonly [string, number, number]>>({
  maxSize: 200_000,
  sizeCalculation: (list) => Math.max(list.length, 1),
});

/** Buckets covering exactly [startUtc, endUtc) in order; the first and last are clipped to the range. */
export function buckets(range: ReportRange, interval: Interval): Bucket[] {
  const { timezone, from, to, startUtc, endUtc } = range;
  const key = [timezone, from, to, startUtc.getTime(), endUtc.getTime(), interval].join('\u0000');
  let list = BUCKET_LISTS.get(key);
  if (list === undefined) {
    list = bucketsOf(range, interval).map(
      (b) => [b.label, b.startUtc.getTime(), b.endUtc.getTime()] as const,
    );
    BUCKET_LISTS.set(key, list);
  }
  // Objects of the caller's own: nothing a caller does to them reaches the list.
  return list.map(([label, start, end]) => ({ label, startUtc: new Date(start), endUtc: new Date(end) }));
}

function bucketsOf(range: ReportRange, interval: Interval): Bucket[] {
  switch (interval) {
    case 'hour':
      return hourBuckets(range);
    case 'day':
      return calendarBuckets(range, (day) => day.plus({ days: 1 }));
    case 'week':
      return calendarBuckets(range, (day) => day.startOf('week').plus({ weeks: 1 }));
    case 'month':
      return calendarBuckets(range, (day) => day.startOf('month').plus({ months: 1 }));
  }
}

/**
 * The zone's constant-offset stretches over [startUtc, endUtc), for SQL that turns UTC into local time.
 * Probes once a day, so two changes that cancel out within one day would go unseen (none in current tzdata).
 */
export function offsetSegments(zone: string, startUtc: Date, endUtc: Date): OffsetSegment[] {
  const tz = ianaZone(zone);
  // Luxon reads the offset of whole seconds, so it is constant within a second.
  const offsetAtSecond = (second: number): number => Math.round(tz.offset(second * 1000) * 60);
  const end = endUtc.getTime();
  const lastSecond = Math.ceil(end / 1000) - 1;
  const segments: OffsetSegment[] = [];
  let segmentStart = startUtc.getTime();
  let offset = offsetAtSecond(Math.floor(segmentStart / 1000));
  let probe = Math.floor(segmentStart / 1000);
  while (probe < lastSecond) {
    const next = Math.min(probe + DAY_SECONDS, lastSecond);
    if (offsetAtSecond(next) === offset) {
      probe = next;
      continue;
    }
    let lo = probe;
    let hi = next;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (offsetAtSecond(mid) === offset) lo = mid;
      else hi = mid;
    }
    segments.push({ startUtc: new Date(segmentStart), endUtc: new Date(hi * 1000), offsetSeconds: offset });
    segmentStart = hi * 1000;
    offset = offsetAtSecond(hi);
    probe = hi;
  }
  if (segmentStart < end) {
    segments.push({ startUtc: new Date(segmentStart), endUtc: new Date(end), offsetSeconds: offset });
  }
  return segments;
}

export function localDate(instant: Date, zone: string): string {
  const date = DateTime.fromJSDate(instant, { zone: ianaZone(zone) }).toISODate();
  if (date === null) throw new Error(`cannot express ${String(instant)} as a date in ${zone}`);
  return date;
}

/** Per zone: its current calendar day and the instants it spans, [fromMs, untilMs). */
const TODAY = new Map<string, { date: string; fromMs: number; untilMs: number }>();

/**
 * `localDate(now, zone)`, worked out once per zone and calendar day: every cached report request
 * needs its site's "today", and going through the zone's rules each time cost more than the
 * rest of the cache key (2 % of a cache hit's CPU). A day is kept only for the instants it spans,
 * so the answer is the same as localDate's at any time (midnight, a clock set back); a day with
 * an offset change in it (DST) is not kept at all.
 */
export function todayIn(zone: string, nowMs = Date.now()): string {
  const known = TODAY.get(zone);
  if (known && nowMs >= known.fromMs && nowMs < known.untilMs) return known.date;
  const local = DateTime.fromMillis(nowMs, { zone: ianaZone(zone) });
  const date = local.toISODate();
  if (date === null) throw new Error(`cannot express ${nowMs} as a date in ${zone}`);
  const start = local.startOf('day');
  const end = local.endOf('day');
  if (start.offset === end.offset) {
    if (TODAY.size >= VALID_ZONES_MAX) TODAY.clear();
    TODAY.set(zone, { date, fromMs: start.toMillis(), untilMs: end.toMillis() + 1 });
  }
  return date;
}

function ianaZone(zone: string): IANAZone {
  if (!isValidTimeZone(zone)) {
    throw new RangeError400('timezone', `timezone '${zone}' is not a known IANA time zone`);
  }
  return IANAZone.create(zone);
}

/** A pure calendar day: UTC-based so that day arithmetic never meets a DST change. */
function calendarDay(isoDate: string): DateTime {
  return DateTime.fromISO(isoDate, { zone: 'utc' });
}

function isoDay(day: DateTime): string {
  return day.toFormat('yyyy-MM-dd');
}

function parseDay(value: string, parameter: 'from' | 'to'): DateTime {
  if (!ISO_DAY.test(value)) {
    throw new RangeError400(parameter, `${parameter} must be a date in YYYY-MM-DD format`);
  }
  const day = calendarDay(value);
  if (!day.isValid) throw new RangeError400(parameter, `${parameter} (${value}) is not a real calendar date`);
  return day;
}

/**
 * The first instant of the local calendar day of `zone` that holds `instant`: the same
 * instant a report range or day bucket of that day starts at (startOfLocalDay).
 */
export function localDayStart(instant: Date, zone: string): Date {
  return remembered(LOCAL_DAY_STARTS, `${zone}\u0000${instant.getTime()}`, () => {
    const local = DateTime.fromJSDate(instant, { zone: ianaZone(zone) });
    const start = startOfLocalDay(local, zone);
    // Where midnight comes twice (DST ends at 01:00, as in America/Havana), a day starts at the
    // second one: the hour between belongs to the day before.
    return start <= instant ? start : startOfLocalDay(local.minus({ days: 1 }), zone);
  });
}

/** The first instant of the local calendar day after the one that holds `instant` (localDayStart). */
export function nextLocalDayStart(instant: Date, zone: string): Date {
  return remembered(NEXT_LOCAL_DAY_STARTS, `${zone}\u0000${instant.getTime()}`, () => {
    const local = DateTime.fromJSDate(instant, { zone: ianaZone(zone) });
    const start = startOfLocalDay(local, zone);
    return start <= instant ? startOfLocalDay(local.plus({ days: 1 }), zone) : start;
  });
}

/** The local calendar date of the site day holding `instant` (localDayStart), as days since 1970-01-01. */
export function localDayNumber(instant: Date, zone: string): number {
  return rememberedNumber(LOCAL_DAY_NUMBERS, `${zone}\u0000${instant.getTime()}`, () => {
    const local = DateTime.fromJSDate(localDayStart(instant, zone), { zone: ianaZone(zone) });
    return Math.round(Date.UTC(local.year, local.month - 1, local.day) / 86_400_000);
  });
}

/** The first instant of the local day numbered `day` (localDayNumber): localDayStart of its noon. */
export function localDayNumberStart(day: number, zone: string): Date {
  return remembered(DAY_NUMBER_STARTS, `${zone}\u0000${day}`, () => {
    const date = new Date(day * 86_400_000);
    const noon = DateTime.fromObject(
      { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: 12 },
      { zone },
    );
    return localDayStart(noon.toJSDate(), zone);
  });
}

/** The first instant of a local calendar day; where midnight does not exist (DST at 00:00) it is 01:00. */
function startOfLocalDay(day: DateTime, zone: string): Date {
  return remembered(DAY_STARTS, `${zone}\u0000${day.year}-${day.month}-${day.day}`, () =>
    DateTime.fromObject({ year: day.year, month: day.month, day: day.day }, { zone })
      .startOf('day')
      .toJSDate(),
  );
}

function makeRange(zone: string, from: DateTime, to: DateTime): ReportRange {
  return {
    timezone: zone,
    from: isoDay(from),
    to: isoDay(to),
    startUtc: startOfLocalDay(from, zone),
    endUtc: startOfLocalDay(to.plus({ days: 1 }), zone),
    days: to.diff(from, 'days').days + 1,
  };
}

/** Consecutive buckets from `from`, each ending at the next calendar boundary, the last clipped to the range. */
function calendarBuckets(range: ReportRange, nextBoundary: (day: DateTime) => DateTime): Bucket[] {
  const result: Bucket[] = [];
  const afterTo = calendarDay(range.to).plus({ days: 1 });
  let day = calendarDay(range.from);
  while (day < afterTo) {
    const boundary = DateTime.min(nextBoundary(day), afterTo);
    result.push({
      label: isoDay(day),
      startUtc: startOfLocalDay(day, range.timezone),
      endUtc: startOfLocalDay(boundary, range.timezone),
    });
    day = boundary;
  }
  return result;
}

/**
 * Buckets start at every instant whose local time is hh:00, and also at each offset change, so
 * that every instant falls in exactly one bucket and a label is always its bucket's exact start
 * (a change by a non-whole hour, as in Australia/Lord_Howe, would otherwise break one of those).
 */
function hourBuckets(range: ReportRange): Bucket[] {
  if (range.days > HOURLY_MAX_DAYS) {
    throw new RangeError400(
      'interval',
      `interval hour is only available for ranges of at most ${HOURLY_MAX_DAYS} days (this one has ${range.days})`,
    );
  }
  const end = range.endUtc.getTime();
  const starts = new Set<number>([range.startUtc.getTime()]);
  for (const segment of offsetSegments(range.timezone, range.startUtc, range.endUtc)) {
    const segmentEnd = segment.endUtc.getTime();
    starts.add(segment.startUtc.getTime());
    const localSeconds = segment.startUtc.getTime() / 1000 + segment.offsetSeconds;
    let hourStart = (Math.ceil(localSeconds / HOUR_SECONDS) * HOUR_SECONDS - segment.offsetSeconds) * 1000;
    for (; hourStart < segmentEnd; hourStart += HOUR_SECONDS * 1000) starts.add(hourStart);
  }
  const sorted = [...starts].sort((a, b) => a - b);
  return sorted.map((start, i) => ({
    label: DateTime.fromMillis(start, { zone: range.timezone }).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ"),
    startUtc: new Date(start),
    endUtc: new Date(i + 1 < sorted.length ? sorted[i + 1] : end),
  }));
}
