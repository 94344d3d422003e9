import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { Interval, ReportRange } from '../date-range';
import { RangeQuery, reportRange } from '../report-range';

/** What a report needs to know of its site. */
export interface SiteContext {
  id: number;
  timezone: string;
  currency: string;
  trackingMode: 'full' | 'cookieless';
}

/**
 * A condition narrowing the sessions a report counts. None exist yet: the type admits only the
 * empty list, so that the first filter cannot be added without the WHERE builder learning it.
 */
export type StatsFilter = never;

/**
 * A report request as a value: which site, which exact UTC range, which sessions (filters),
 * and the shape parameters every report shares. Built once per request by StatsQueryParser;
 * everything below the controller reads it instead of raw query parameters.
 */
export interface StatsQuery {
  readonly site: SiteContext;
  readonly range: ReportRange;
  readonly filters: readonly StatsFilter[];
  readonly interval?: Interval;
  readonly limit?: number;
  /**
   * `raw` makes every source read the raw tables whatever decideTable would pick: the parity
   * reference and the benchmark's "before" figures. Requests always plan `auto`.
   */
  readonly tables?: 'auto' | 'raw';
}

/** The same query over another range (comparisons). */
export function withRange(query: StatsQuery, range: ReportRange): StatsQuery {
  return { ...query, range };
}

export interface ReportParams extends RangeQuery {
  interval?: Interval;
  limit?: number;
}

/** Turns a site and a report's validated parameters into a StatsQuery; range mistakes are 400s. */
@Injectable()
export class StatsQueryParser {
  constructor(private readonly config: AppConfig) {}

  parse(site: Site | SiteContext, params: ReportParams, now?: Date): StatsQuery {
    return {
      site: {
        id: site.id,
        timezone: site.timezone,
        currency: site.currency,
        trackingMode: site.trackingMode,
      },
      range: reportRange(params, site, this.config.limits.maxRangeDays, now),
      filters: [],
      interval: params.interval,
      limit: params.limit,
    };
  }
}
