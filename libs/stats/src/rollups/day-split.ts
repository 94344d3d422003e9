import type { StatsQuery } from '../query/stats-query';

const DAY_MS = 86_400_000;

/** One part of a range total read from a rollup kept at two grains. */
export interface RollupPart<T extends string> {
  table: T;
  /** The query over this part's span only (its range's startUtc/endUtc; nothing else differs). */
  query: StatsQuery;
}

/**
 * How a total over the query's range reads a rollup kept by 15 minutes and by UTC day: the
 * whole UTC days inside the range from `dayTable`, the quarter hours on either side from
 * `quarterTable`. A range with no whole UTC day reads `quarterTable` alone. Only for totals
 * over the range: a report bucket in another zone than UTC holds no whole UTC day.
 */
export function rollupParts<T extends string>(
  query: StatsQuery,
  quarterTable: T,
  dayTable: T,
): RollupPart<T>[] {
  const start = query.range.startUtc.getTime();
  const end = query.range.endUtc.getTime();
  const firstDay = Math.ceil(start / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(end / DAY_MS) * DAY_MS;
  if (firstDay >= lastDay) return [{ table: quarterTable, query }];
  const span = (table: T, from: number, to: number): RollupPart<T> => ({
    table,
    query: { ...query, range: { ...query.range, startUtc: new Date(from), endUtc: new Date(to) } },
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
