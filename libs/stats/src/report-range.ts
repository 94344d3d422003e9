import { ReportRange, resolveRange } from './date-range';

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

/** The `meta` every report carries (SPEC §3). */
export function reportMeta(
  siteId: number,
  range: ReportRange,
): { site_id: number; from: string; to: string; timezone: string } {
  return { site_id: siteId, from: range.from, to: range.to, timezone: range.timezone };
}
