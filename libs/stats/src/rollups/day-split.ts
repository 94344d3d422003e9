import {
  localDayNumber,
  localDayNumberStart,
  localDayStart,
  nextLocalDayStart,
  type Bucket,
} from '../date-range';
import type { StatsQuery } from '../query/stats-query';
import { ROLLUP_BUCKET_MS } from './session-rollup';

/** One part of a range total read from a rollup kept at two grains. */
export interface RollupPart<T extends string> {
  table: T;
  /** The query over this part's span only (its range's startUtc/endUtc; nothing else differs). */
  query: StatsQuery;
}

export interface DayRows {
  /**
   * The zone whose local days the day rows are: the site's (the session day rollups, kept by
   * `aggregate`, localDayBucket), or UTC (item_day_rollups, written by SQL at import).
   */
  zone?: string;
  /** The report buckets the rows are grouped by: none may start inside a day. */
  buckets?: readonly Bucket[];
}

/**
 * How a range reads a rollup kept by 15 minutes and by day: the whole days inside the range
 * from `dayTable`, the quarter hours on either side from `quarterTable`. A report in the site's
 * zone (the default) is whole site days, so it reads day rows only. Grouped by report buckets,
 * the day rows serve only where no bucket starts inside a day (days, weeks and months in the
 * days' zone); otherwise, and where a range holds no whole day, `quarterTable` alone answers.
 */
export function rollupParts<T extends string>(
  query: StatsQuery,
  quarterTable: T,
  dayTable: T,
  { zone = query.site.timezone, buckets = [] }: DayRows = {},
): RollupPart<T>[] {
  const start = query.range.startUtc;
  const end = query.range.endUtc;
  const startDay = localDayStart(start, zone);
  const firstDay = startDay.getTime() === start.getTime() ? startDay : nextLocalDayStart(start, zone);
  const lastDay = localDayStart(end, zone);
  const quartersOnly = [{ table: quarterTable, query }];
  if (firstDay >= lastDay) return quartersOnly;
  // Day rows are kept only where local midnights fall on 15-minute boundaries (localDayBucket).
  if (firstDay.getTime() % ROLLUP_BUCKET_MS !== 0 || lastDay.getTime() % ROLLUP_BUCKET_MS !== 0)
    return quartersOnly;
  const insideDay = (at: Date) =>
    at > firstDay && at < lastDay && localDayStart(at, zone).getTime() !== at.getTime();
  if (buckets.some((b) => insideDay(b.startUtc))) return quartersOnly;
  const span = (table: T, from: Date, to: Date): RollupPart<T> => ({
    table,
    query: { ...query, range: { ...query.range, startUtc: from, endUtc: to } },
  });
  return [
    span(dayTable, firstDay, lastDay),
    ...(firstDay > start ? [span(quarterTable, start, firstDay)] : []),
    ...(end > lastDay ? [span(quarterTable, lastDay, end)] : []),
  ];
}

/**
 * Whether the range is whole local days of the site's zone (every day start on a 15-minute
 * boundary): a rollup kept by site day alone answers it (rollupParts gives one day part).
 */
export function wholeSiteDays(query: StatsQuery): boolean {
  const parts = rollupParts(query, 'quarter', 'day');
  return parts.length === 1 && parts[0].table === 'day';
}

/** The selects as one UNION ALL, in their order (the parts of a range, or several groups). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any Kysely select that can union with its own kind
export function unionAllOf<Q extends { unionAll(other: any): Q }>(parts: readonly Q[]): Q {
  return parts.slice(1).reduce((union, part) => union.unionAll(part), parts[0]);
}

/**
 * The spans of the span rollups (session_path_span_rollups, session_span_rollups), in site
 * days, largest first: a block of `span` days starts on a local day whose number (days since
 * 1970-01-01) is a multiple of `span`.
 */
export const DAY_SPANS = [64, 16, 4] as const;

/** Whole site days `[from, to)` read from the rows of one span (1: the day rows). */
export interface DaySpanPart {
  span: number;
  from: Date;
  to: Date;
}

/**
 * The whole site days `[firstDay, lastDay)` (local day starts) as aligned blocks of DAY_SPANS
 * days where they fit and single days elsewhere, the largest block first at every day; runs
 * of the same span merged into one part. A 30-day range is at most a few blocks and days, so
 * a total over it reads a few rows per value instead of 30.
 */
export function daySpanParts(firstDay: Date, lastDay: Date, zone: string): DaySpanPart[] {
  const end = localDayNumber(lastDay, zone);
  const parts: Array<{ span: number; from: number; to: number }> = [];
  for (let day = localDayNumber(firstDay, zone); day < end;) {
    const span = DAY_SPANS.find((s) => day % s === 0 && day + s <= end) ?? 1;
    const last = parts.at(-1);
    if (last && last.span === span && last.to === day) last.to = day + span;
    else parts.push({ span, from: day, to: day + span });
    day += span;
  }
  return parts.map((p) => ({
    span: p.span,
    from: localDayNumberStart(p.from, zone),
    to: localDayNumberStart(p.to, zone),
  }));
}

/** A site's block of `span` days holding a site day (by its start): the block's first day start, memoised. */
export function daySpanBucket(zone: string, span: number): (dayStart: Date) => Date {
  const blocks = new Map<number, Date>();
  return (dayStart) => {
    const known = blocks.get(dayStart.getTime());
    if (known) return known;
    const day = localDayNumber(dayStart, zone);
    const block = localDayNumberStart(day - (((day % span) + span) % span), zone);
    blocks.set(dayStart.getTime(), block);
    return block;
  };
}

/** A span rollup's change: the sessions of a key in a block of `span` site days (its first day's start). */
export type SpanDelta<D> = D & { span: number };

/**
 * A day rollup's changes of sessions (buckets: site days) by the blocks of every span of
 * DAY_SPANS that hold them (`blockOf(span)`: daySpanBucket of the site's zone), summed per
 * block and `keyOf` (the row's key but its bucket), rows left with no change dropped.
 */
export function spanDeltas<D extends { bucket: Date; sessions: number }>(
  days: readonly D[],
  blockOf: (span: number) => (dayStart: Date) => Date,
  keyOf: (day: D) => string,
): Array<SpanDelta<D>> {
  const blocks = new Map<string, SpanDelta<D>>();
  for (const span of DAY_SPANS) {
    const of = blockOf(span);
    for (const d of days) {
      const bucket = of(d.bucket);
      const key = `${span}\u0000${bucket.getTime()}\u0000${keyOf(d)}`;
      const block = blocks.get(key) ?? { ...d, bucket, span, sessions: 0 };
      block.sessions += d.sessions;
      blocks.set(key, block);
    }
  }
  return [...blocks.values()].filter((b) => b.sessions !== 0);
}

/** A part of a range read from a rollup kept by 15 minutes, by day and by blocks of days. */
export interface RollupSpanPart<T extends string> extends RollupPart<T> {
  /** The block length in days of a `spanTable` part (its rows' `span`); 0 for the other tables. */
  span: number;
}

/**
 * rollupParts with the whole site days read as daySpanParts: aligned blocks from `spanTable`
 * (rows with a `span` column), the days around them from `dayTable`.
 */
export function rollupSpanParts<T extends string>(
  query: StatsQuery,
  quarterTable: T,
  dayTable: T,
  spanTable: T,
): RollupSpanPart<T>[] {
  return rollupParts(query, quarterTable, dayTable).flatMap((part): RollupSpanPart<T>[] => {
    if (part.table !== dayTable) return [{ ...part, span: 0 }];
    const { startUtc, endUtc } = part.query.range;
    return daySpanParts(startUtc, endUtc, query.site.timezone).map((s) => ({
      table: s.span === 1 ? dayTable : spanTable,
      query: { ...part.query, range: { ...part.query.range, startUtc: s.from, endUtc: s.to } },
      span: s.span === 1 ? 0 : s.span,
    }));
  });
}

/**
 * The buckets of a day or span part of rollupSpanParts (not of its quarter-hour parts): each
 * site day of a day part, each block's first day of a span part, as the rows' `bucket` holds them.
 */
export function partBuckets(part: RollupSpanPart<string>, zone: string): Date[] {
  const { startUtc, endUtc } = part.query.range;
  const step = part.span > 0 ? part.span : 1;
  const buckets: Date[] = [];
  for (let day = localDayNumber(startUtc, zone), end = localDayNumber(endUtc, zone); day < end; day += step) {
    buckets.push(localDayNumberStart(day, zone));
  }
  return buckets;
}
