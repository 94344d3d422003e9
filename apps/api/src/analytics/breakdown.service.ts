import { buckets, money, rate, reportMeta, StatsQuery, StatsRepository } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { BreakdownQueries, BreakdownRequest, SeriesSums, SeriesSumsByBucket } from './breakdown.queries';
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
    private readonly stats: StatsRepository,
  ) {}

  async report(
    query: StatsQuery,
    params: Pick<BreakdownQueryDto, 'metric' | 'dimension' | 'interval' | 'limit'>,
  ): Promise<BreakdownResponseDto> {
    const { metric, dimension, interval, limit } = params;
    const list = buckets(query.range, interval);
    const conversionGoals =
      metric === 'conv_rate' ? await this.stats.conversionGoals(query.site.id) : undefined;
    const request: BreakdownRequest = {
      metric,
      dimension,
      goals: conversionGoals?.goals ?? [],
      goalsRolledUp: conversionGoals?.rolledUp,
    };
    const { top, sums } = await this.queries.topSeriesSums(query, request, limit, list);
    const toSeries = (value: string, s: SeriesSumsByBucket | undefined): BreakdownSeriesDto => ({
      value,
      total: metricValue(metric, s?.total ?? NONE),
      points: list.map((_, i) => metricValue(metric, s?.points.get(i) ?? NONE)),
    });
    return {
      data: {
        metric,
        dimension,
        interval,
        buckets: list.map((b) => b.label),
        series: [
          ...top.map((value) => toSeries(value, sums.top.get(value))),
          toSeries(OTHER_SERIES, sums.other),
        ],
      },
      meta: reportMeta(query),
    };
  }
}
