import type { CsvExportOptions, CsvRow } from '@app/common';
import { BreakdownResponseDto } from './dto/breakdown.dto';
import { EngagementResponseDto } from './dto/engagement.dto';
import { FunnelResponseDto } from './dto/funnel.dto';
import { OverviewResponseDto } from './dto/overview.dto';

const TOP_LISTS = [
  'top_channels',
  'top_sources',
  'top_countries',
  'top_devices',
  'entry_pages',
  'exit_pages',
] as const;

const HEADLINE = [
  'visitors',
  'sessions',
  'pageviews',
  'bounce_rate',
  'pages_per_session',
  'avg_session_duration_seconds',
] as const;

/**
 * Overview as CSV: every figure of the JSON in one table, told apart by the `section` column
 * (as the e-commerce CSV does); columns a section does not use stay empty.
 * - `headline`: one row per headline metric (`metric`, `metric_value`);
 * - with `compare`: `comparison` rows (the comparison range's `from`, `to` and metrics) and
 *   `change` rows (% change per metric; empty when the previous value is 0);
 * - `top_channels` … `exit_pages`: one row per list item (`value`, `sessions`, `share`).
 */
export const OVERVIEW_CSV: CsvExportOptions<OverviewResponseDto> = {
  type: OverviewResponseDto,
  filename: 'overview',
  table: ({ data }) => {
    const figure = (section: string, metric: string, value: string | number | null): CsvRow => ({
      section,
      metric,
      metric_value: value,
    });
    const comparison = data.comparison;
    return {
      columns: ['section', 'metric', 'metric_value', 'value', 'sessions', 'share'],
      rows: [
        ...HEADLINE.map((metric) => figure('headline', metric, data[metric])),
        ...(comparison
          ? [
              figure('comparison', 'from', comparison.from),
              figure('comparison', 'to', comparison.to),
              ...HEADLINE.map((metric) => figure('comparison', metric, comparison[metric])),
              ...HEADLINE.map((metric) => figure('change', metric, comparison.change[metric])),
            ]
          : []),
        ...TOP_LISTS.flatMap((section) => data[section].map((item): CsvRow => ({ section, ...item }))),
      ],
    };
  },
  example:
    'section,metric,metric_value,value,sessions,share\r\nheadline,visitors,2210,,,\r\nheadline,sessions,2922,,,\r\n' +
    'top_channels,,,Organic Search,1204,41.2\r\n',
};

/** Breakdown as CSV: one row per bucket and series, the metric in the last column. */
export const BREAKDOWN_CSV: CsvExportOptions<BreakdownResponseDto> = {
  type: BreakdownResponseDto,
  filename: 'breakdown',
  table: ({ data }) => ({
    columns: ['bucket', data.dimension, data.metric],
    rows: data.buckets.flatMap((bucket, i) =>
      data.series.map((s): CsvRow => ({ bucket, [data.dimension]: s.value, [data.metric]: s.points[i] })),
    ),
  }),
  example: 'bucket,channel,sessions\r\n2026-10-01,Organic Search,41\r\n2026-10-01,Other,12\r\n',
};

/** Engagement as CSV: the scroll-depth distribution. */
export const ENGAGEMENT_CSV: CsvExportOptions<EngagementResponseDto> = {
  type: EngagementResponseDto,
  filename: 'scroll-depth',
  table: ({ data }) => ({
    columns: ['bucket', 'pageviews', 'share'],
    rows: data.scroll_depth.map((b): CsvRow => ({ ...b })),
  }),
  example: 'bucket,pageviews,share\r\n0-24,310,18.5\r\n',
};

/** Funnel as CSV: one row per step. */
export const FUNNEL_CSV: CsvExportOptions<FunnelResponseDto> = {
  type: FunnelResponseDto,
  filename: 'funnel',
  table: ({ data }) => ({
    columns: ['step', 'type', 'path', 'name', 'visitors', 'conversion_rate', 'drop_off', 'drop_off_rate'],
    rows: data.steps.map((s): CsvRow => ({ ...s })),
  }),
  example:
    'step,type,path,name,visitors,conversion_rate,drop_off,drop_off_rate\r\n1,pageview,/pricing,,200,100,0,0\r\n',
};
