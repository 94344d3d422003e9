import { localDayStart, nextLocalDayStart, type Bucket } from '../date-range';
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

/** The selects as one UNION ALL, in their order (the parts of a range, or several groups). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any Kysely select that can union with its own kind
export function unionAllOf<Q extends { unionAll(other: any): Q }>(parts: readonly Q[]): Q {
  return parts.slice(1).reduce((union, part) => union.unionAll(part), parts[0]);
}
