import {
  average,
  comparisonRange,
  percentChange,
  rate,
  reportMeta,
  ReportRange,
  StatsQuery,
  withRange,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import {
  HeadlineMetricsDto,
  MetricChangeDto,
  OverviewDataDto,
  OverviewQueryDto,
  OverviewResponseDto,
  TopItemDto,
} from './dto/overview.dto';
import { HeadlineTotals, OverviewQueries, TopList, TopListRow } from './overview.queries';

const HEADLINE_METRICS = [
  'visitors',
  'sessions',
  'pageviews',
  'bounce_rate',
  'pages_per_session',
  'avg_session_duration_seconds',
] as const;

export function headlineMetrics(t: HeadlineTotals): HeadlineMetricsDto {
  return {
    visitors: t.visitors,
    sessions: t.sessions,
    pageviews: t.pageviews,
    bounce_rate: rate(t.bounces, t.sessions),
    pages_per_session: average(t.sessionPageviews, t.sessions),
    avg_session_duration_seconds: average(t.durationSeconds, t.sessions),
  };
}

/** Change per headline metric, computed from the reported (rounded) values so clients can redo it. */
export function metricChanges(current: HeadlineMetricsDto, previous: HeadlineMetricsDto): MetricChangeDto {
  const change = {} as MetricChangeDto;
  for (const metric of HEADLINE_METRICS) change[metric] = percentChange(current[metric], previous[metric]);
  return change;
}

@Injectable()
export class OverviewService {
  constructor(private readonly queries: OverviewQueries) {}

  async report(
    query: StatsQuery,
    params: Pick<OverviewQueryDto, 'limit' | 'compare'>,
  ): Promise<OverviewResponseDto> {
    const [totals, rows, previous] = await Promise.all([
      this.queries.headlineTotals(query),
      this.queries.topLists(query, params.limit),
      params.compare
        ? this.comparison(withRange(query, comparisonRange(query.range, params.compare)))
        : undefined,
    ]);
    const current = headlineMetrics(totals);
    const top = (list: TopList): TopItemDto[] => topItems(rows, list, totals.sessions);
    const data: OverviewDataDto = {
      ...current,
      top_channels: top('channel'),
      top_sources: top('source'),
      top_countries: top('country'),
      top_devices: top('device'),
      entry_pages: top('entry_path'),
      exit_pages: top('exit_path'),
    };
    if (previous) {
      data.comparison = {
        from: previous.range.from,
        to: previous.range.to,
        ...previous.metrics,
        change: metricChanges(current, previous.metrics),
      };
    }
    return { data, meta: reportMeta(query) };
  }

  private async comparison(query: StatsQuery): Promise<{ range: ReportRange; metrics: HeadlineMetricsDto }> {
    return { range: query.range, metrics: headlineMetrics(await this.queries.headlineTotals(query)) };
  }
}

function topItems(rows: TopListRow[], list: TopList, sessions: number): TopItemDto[] {
  return rows
    .filter((r) => r.list === list)
    .map((r) => ({ value: r.value, sessions: r.sessions, share: rate(r.sessions, sessions) }));
}
