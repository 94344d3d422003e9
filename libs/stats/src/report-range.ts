import { ReportRange, resolveRange } from './date-range';
import { FilterMeta, filtersMeta } from './query/filters';
import type { StatsQuery } from './query/stats-query';

export interface RangeQuery {
  from?: string;
  to?: string;
  timezone?: string;
}

/** The report range of a request on a site (SPEC §3); throws ParameterError (→ 400). */
export function reportRange(
  query: RangeQuery,
  site: { timezone: string },
  maxDays: number,
  now?: Date,
): ReportRange {
  return resolveRange({
    from: query.from,
    to: query.to,
    timezone: query.timezone,
    siteTimezone: site.timezone,
    maxDays,
    now,
  });
}

/** The `meta` every report carries (SPEC §3): site, range, zone, and the filters as parsed. */
export function reportMeta(query: StatsQuery): {
  site_id: number;
  from: string;
  to: string;
  timezone: string;
  filters: FilterMeta[];
} {
  const { range } = query;
  return {
    site_id: query.site.id,
    from: range.from,
    to: range.to,
    timezone: range.timezone,
    filters: filtersMeta(query.filters),
  };
}
