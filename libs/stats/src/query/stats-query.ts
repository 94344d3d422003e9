import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { Interval, ReportRange } from '../date-range';
import { ParameterError } from '../parameter-error';
import { RangeQuery, reportRange } from '../report-range';
import { conditionsOnSeveralAttributes, type StatsFilter } from '../sql/session-filter';
import { complementedPage, pagesOfCondition } from '../sql/session-pages';
import { StatsRepository } from '../stats.repository';
import { parseFilters } from './filters';

export type { StatsFilter };

/** What a report needs to know of its site. */
export interface SiteContext {
  id: number;
  timezone: string;
  currency: string;
  trackingMode: 'full' | 'cookieless';
}

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
  /** The combinations of attributes the filters select, when few (SessionScope.combinations). */
  readonly combinations?: readonly string[];
  /**
   * Under filters, the longest duration of the site's sessions in milliseconds (an upper bound,
   * site_session_bounds): the sessions that cross the range's start or end are then looked for
   * among those started at most that long before it (pageviews-by-session.ts, crossing).
   */
  readonly longestSessionMillis?: number;
  /**
   * Under a condition session_pages may answer, or `page!=` one path (complementedPage): its rows
   * of the path were current (SessionScope.pageRowsCurrent).
   */
  readonly pageRowsCurrent?: boolean;
  /** Under a `page==` condition with a prefix session_pages answers: its page_keys, when few (SessionScope.pageKeys). */
  readonly pageKeys?: readonly string[];
}

/** The same query over another range (comparisons). */
export function withRange(query: StatsQuery, range: ReportRange): StatsQuery {
  return { ...query, range };
}

export interface ReportParams extends RangeQuery {
  interval?: Interval;
  limit?: number;
  /** SPEC §3 Filters, as sent. */
  filters?: string;
}

/**
 * Turns a site and a report's validated parameters into a StatsQuery; range and filter
 * mistakes are 400s. A goal condition's ids are looked up among the site's goals, so that SQL
 * can match their hits; an id that is not one of them is a 400 too. The combinations of
 * attributes that conditions on two attributes or more select are read once, and listed when
 * they are few, so that the statements name them (SessionScope.combinations). Under filters, the
 * site's longest session is read too (StatsQuery.longestSessionMillis), and under a condition
 * session_pages may answer (or `page!=` one path), whether its rows of the path are current (StatsQuery.pageRowsCurrent),
 * and under a prefix, the page_keys under its values when few (StatsQuery.pageKeys).
 */
@Injectable()
export class StatsQueryParser {
  constructor(
    private readonly config: AppConfig,
    private readonly stats: StatsRepository,
  ) {}

  async parse(site: Site | SiteContext, params: ReportParams, now?: Date): Promise<StatsQuery> {
    const range = reportRange(params, site, this.config.limits.maxRangeDays, now);
    const filters = await this.resolveGoals(site.id, parseFilters(params.filters));
    // Listed only under conditions on two attributes or more (conditionsOnSeveralAttributes).
    const scope = { site, filters };
    const combinations = conditionsOnSeveralAttributes(scope)
      ? await this.stats.selectedCombinations(scope)
      : undefined;
    const longestSessionMillis =
      filters.length > 0 ? await this.stats.longestSessionMillis(site.id) : undefined;
    const pages = pagesOfCondition(filters) ?? complementedPage(filters);
    const pageRowsCurrent =
      pages === undefined ? undefined : await this.stats.pageRowsCurrent(site.id, pages);
    const pageKeys =
      pages?.some((v) => v.prefix) === true && pageRowsCurrent === true
        ? await this.stats.prefixPageKeys(site.id, pages)
        : undefined;
    return {
      site: {
        id: site.id,
        timezone: site.timezone,
        currency: site.currency,
        trackingMode: site.trackingMode,
      },
      range,
      filters,
      interval: params.interval,
      limit: params.limit,
      ...(combinations === undefined ? {} : { combinations }),
      ...(longestSessionMillis === undefined ? {} : { longestSessionMillis }),
      ...(pageRowsCurrent === undefined ? {} : { pageRowsCurrent }),
      ...(pageKeys === undefined ? {} : { pageKeys }),
    };
  }

  private async resolveGoals(siteId: number, filters: StatsFilter[]): Promise<StatsFilter[]> {
    if (!filters.some((f) => f.dimension === 'goal')) return filters;
    const goals = await this.stats.siteGoals(siteId);
    return filters.map((f) => {
      if (f.dimension !== 'goal') return f;
      const named = f.values.map((v) => {
        const goal = /^[1-9]\d{0,9}$/.test(v.text) ? goals.find((g) => g.id === Number(v.text)) : undefined;
        if (!goal) {
          throw new ParameterError(
            'filters',
            `filters: "${v.text}" is not the id of a goal of site ${siteId}`,
          );
        }
        return goal;
      });
      return { ...f, goals: named };
    });
  }
}
