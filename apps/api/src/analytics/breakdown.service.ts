import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { buckets, money, rate, reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { BreakdownQueries, SeriesSums, SeriesSumsByBucket } from './breakdown.queries';
import {
  BreakdownMetric,
  BreakdownQueryDto,
  BreakdownResponseDto,
  BreakdownSeriesDto,
} from './dto/breakdown.dto';

export const OTHER_SERIES = 'Other';

const NONE: SeriesSums = { num: '0', den: '0' };

const RATE_METRICS: ReadonlySet<BreakdownMetric> = new Set(['bounce_rate', 'conv_rate']);

/** The reported number of a series' sums: a rate over the union of its rows, or the sum itself. */
export function metricValue(metric: BreakdownMetric, sums: SeriesSums): number {
  if (RATE_METRICS.has(metric)) return rate(Number(sums.num), Number(sums.den));
  if (metric === 'revenue') return money(sums.num);
  return Number(sums.num);
}

@Injectable()
export class BreakdownService {
  constructor(
    private readonly queries: BreakdownQueries,
    private readonly config: AppConfig,
  ) {}

  async breakdown(site: Site, query: BreakdownQueryDto): Promise<BreakdownResponseDto> {
    const range = reportRange(query, site, this.config.limits.maxRangeDays);
    const list = buckets(range, query.interval);
    const goals = query.metric === 'conv_rate' ? await this.queries.siteGoals(site.id) : [];
    const top = await this.queries.topValues(
      site.id,
      range,
      query.metric,
      query.dimension,
      query.limit,
      goals,
    );
    const sums = await this.queries.seriesSums(
      site.id,
      range,
      query.metric,
      query.dimension,
      top,
      list,
      goals,
    );
    const toSeries = (value: string, s: SeriesSumsByBucket | undefined): BreakdownSeriesDto => ({
      value,
      total: metricValue(query.metric, s?.total ?? NONE),
      points: list.map((_, i) => metricValue(query.metric, s?.points.get(i) ?? NONE)),
    });
    return {
      data: {
        metric: query.metric,
        dimension: query.dimension,
        interval: query.interval,
        buckets: list.map((b) => b.label),
        series: [
          ...top.map((value) => toSeries(value, sums.top.get(value))),
          toSeries(OTHER_SERIES, sums.other),
        ],
      },
      meta: reportMeta(site.id, range),
    };
  }
}
