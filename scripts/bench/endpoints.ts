/**
 * What the benchmark asks for: every route of the API, each with a sequence of varied
 * parameters (ranges of 28–30 days ending today, yesterday or the day before; the default
 * range first), and for the reports, how to compute the same answer in-process on the raw
 * tables (`StatsQuery.tables = 'raw'`) from the same parameters.
 */
import type { INestApplicationContext, Type } from '@nestjs/common';
import { DateTime } from 'luxon';
import type { SiteContext, StatsQuery } from '@app/stats';
import { BreakdownService } from '../../apps/api/src/analytics/breakdown.service';
import { BreakdownQueryDto } from '../../apps/api/src/analytics/dto/breakdown.dto';
import { EngagementQueryDto } from '../../apps/api/src/analytics/dto/engagement.dto';
import { FunnelQueryDto } from '../../apps/api/src/analytics/dto/funnel.dto';
import { OverviewQueryDto } from '../../apps/api/src/analytics/dto/overview.dto';
import { EngagementService } from '../../apps/api/src/analytics/engagement.service';
import { FunnelService } from '../../apps/api/src/analytics/funnel.service';
import { OverviewService } from '../../apps/api/src/analytics/overview.service';
import { ConversionsService } from '../../apps/api/src/conversions/conversions.service';
import { ConversionsQueryDto } from '../../apps/api/src/conversions/dto/conversions-query.dto';
import { EcommerceQueryDto } from '../../apps/api/src/ecommerce/dto/ecommerce-query.dto';
import { EcommerceService } from '../../apps/api/src/ecommerce/ecommerce.service';
import { EventsQueryDto } from '../../apps/api/src/events/dto/events-query.dto';
import { EventsService } from '../../apps/api/src/events/events.service';
import { BENCH_FUNNEL } from './dataset';

export type Params = Record<string, string>;

/** Runs a report in-process from its validated parameters, on the tables `query` plans. */
type InProcess = (app: INestApplicationContext, query: StatsQuery, dto: never) => Promise<unknown>;

export interface Endpoint {
  /** Row name in the tables and the JSON. */
  name: string;
  /** Route template, as in the OpenAPI document. */
  route: string;
  /** The `n`-th request's parameters. */
  params: (n: number) => Params;
  /** Present for every report that has a raw computation to compare with. */
  raw?: { dto: Type; run: InProcess };
  /**
   * The group whose targets apply: issue #10's (report, funnel, realtime) or issue #11's
   * (filtered by session attributes; filtered by a page or a goal).
   */
  target: 'report' | 'funnel' | 'realtime' | 'filter-attribute' | 'filter-page' | 'none';
  /**
   * Timed (and computed raw) while a queued slice is imported and not aggregated yet
   * (writeQueuedSlice): some sessions have gained `/pricing` since they were derived.
   */
  queued?: boolean;
}

const DIMENSIONS = ['channel', 'country', 'device', 'browser'];
const INTERVALS = ['day', 'week'];
export const BREAKDOWN_METRICS = ['sessions', 'pageviews', 'bounce_rate', 'conv_rate', 'revenue'];

/** A date range of 28–30 days ending `n % 3` days ago; the default range (none given) for n = 0. */
export function rangeParams(n: number, today: string): Params {
  if (n === 0) return {};
  const end = DateTime.fromISO(today).minus({ days: n % 3 });
  const days = 28 + ((n * 5) % 3);
  return { from: end.minus({ days: days - 1 }).toISODate()!, to: end.toISODate()! };
}

/** Every route of the API with the parameters of each request, dated around `today` (the site's). */
export function endpoints(today: string): Endpoint[] {
  const dated = (extra: (n: number) => Params) => (n: number) => ({ ...rangeParams(n, today), ...extra(n) });
  const list: Endpoint[] = [
    {
      name: 'overview',
      route: '/api/v1/sites/{id}/analytics/overview',
      params: dated((n) => ({ limit: '10', ...(n % 3 === 2 ? { compare: 'previous_period' } : {}) })),
      raw: {
        dto: OverviewQueryDto,
        run: (app, q, dto: OverviewQueryDto) => app.get(OverviewService).report(q, dto),
      },
      target: 'report',
    },
    ...BREAKDOWN_METRICS.map((metric): Endpoint => ({
      name: `breakdown ${metric}`,
      route: '/api/v1/sites/{id}/analytics/breakdown-timeseries',
      params: dated((n) => ({
        metric,
        dimension: DIMENSIONS[n % DIMENSIONS.length],
        interval: INTERVALS[Math.floor(n / DIMENSIONS.length) % INTERVALS.length],
        limit: '5',
      })),
      raw: {
        dto: BreakdownQueryDto,
        run: (app, q, dto: BreakdownQueryDto) => app.get(BreakdownService).report(q, dto),
      },
      target: 'report',
    })),
    {
      name: 'engagement',
      route: '/api/v1/sites/{id}/analytics/engagement',
      params: dated(() => ({})),
      raw: { dto: EngagementQueryDto, run: (app, q) => app.get(EngagementService).report(q) },
      target: 'report',
    },
    {
      name: 'events',
      route: '/api/v1/sites/{id}/events',
      params: dated((n) => ({ page: String(1 + (n % 2)), limit: '25' })),
      raw: {
        dto: EventsQueryDto,
        run: (app, q, dto: EventsQueryDto) => app.get(EventsService).report(q, dto),
      },
      target: 'report',
    },
    {
      name: 'conversions',
      route: '/api/v1/sites/{id}/conversions',
      params: dated(() => ({})),
      raw: { dto: ConversionsQueryDto, run: (app, q) => app.get(ConversionsService).report(q) },
      target: 'report',
    },
    {
      name: 'ecommerce',
      route: '/api/v1/sites/{id}/ecommerce',
      params: dated(() => ({ limit: '10' })),
      raw: {
        dto: EcommerceQueryDto,
        run: (app, q, dto: EcommerceQueryDto) => app.get(EcommerceService).report(q, dto),
      },
      target: 'report',
    },
    {
      name: 'funnel (3 steps, 24 h)',
      route: '/api/v1/sites/{id}/analytics/funnel',
      params: dated(() => ({ steps: JSON.stringify(BENCH_FUNNEL), window_hours: '24' })),
      raw: {
        dto: FunnelQueryDto,
        run: (app, q, dto: FunnelQueryDto) => app.get(FunnelService).report(q, dto),
      },
      target: 'funnel',
    },
    ...filteredEndpoints(dated),
    {
      name: 'realtime',
      route: '/api/v1/sites/{id}/analytics/realtime',
      params: () => ({}),
      target: 'realtime',
    },
    { name: 'sites', route: '/api/v1/sites', params: () => ({}), target: 'none' },
  ];
  return list;
}

/**
 * Issue #11's rows: reports under 1–3 session-attribute conditions (one attribute: the session
 * rollup can answer; several: raw rows) and under a page or goal condition (raw rows).
 */
function filteredEndpoints(dated: (extra: (n: number) => Params) => (n: number) => Params): Endpoint[] {
  const overview = {
    route: '/api/v1/sites/{id}/analytics/overview',
    raw: {
      dto: OverviewQueryDto,
      run: (app: INestApplicationContext, q: StatsQuery, dto: OverviewQueryDto) =>
        app.get(OverviewService).report(q, dto),
    },
  };
  const breakdown = {
    route: '/api/v1/sites/{id}/analytics/breakdown-timeseries',
    raw: {
      dto: BreakdownQueryDto,
      run: (app: INestApplicationContext, q: StatsQuery, dto: BreakdownQueryDto) =>
        app.get(BreakdownService).report(q, dto),
    },
  };
  const eventsUnderPricing: Endpoint = {
    name: 'events ⟨page⟩',
    route: '/api/v1/sites/{id}/events',
    params: dated(() => ({ limit: '25', filters: 'page==/pricing' })),
    raw: {
      dto: EventsQueryDto,
      run: (app, q, dto: EventsQueryDto) => app.get(EventsService).report(q, dto),
    },
    target: 'filter-page',
  };
  const countries = ['US', 'DE|FR', 'GB'];
  const onePost = (n: number) => `page==/blog/post-${10 + ((n * 37) % 100)}`;
  return [
    {
      ...overview,
      name: 'overview ⟨country⟩',
      params: dated((n) => ({ limit: '10', filters: `country==${countries[n % 3]}` })),
      target: 'filter-attribute',
    },
    {
      ...overview,
      name: 'overview ⟨3 attributes⟩',
      params: dated((n) => ({
        limit: '10',
        filters: `country==${countries[n % 3]};device!=mobile;channel==Organic Search|Direct`,
      })),
      target: 'filter-attribute',
    },
    {
      ...breakdown,
      name: 'breakdown sessions ⟨country⟩',
      params: dated((n) => ({
        metric: 'sessions',
        dimension: 'country',
        interval: 'day',
        limit: '5',
        filters: `country==${countries[n % 3]}`,
      })),
      target: 'filter-attribute',
    },
    {
      // conv_rate's converted sessions under conditions on attributes: goal_attribute_rollups.
      ...breakdown,
      name: 'breakdown conv_rate ⟨country⟩',
      params: dated((n) => ({
        metric: 'conv_rate',
        dimension: 'channel',
        interval: 'day',
        limit: '5',
        filters: `country==${countries[n % 3]}`,
      })),
      target: 'filter-attribute',
    },
    {
      name: 'engagement ⟨source, device⟩',
      route: '/api/v1/sites/{id}/analytics/engagement',
      params: dated(() => ({ filters: 'source==google;device==mobile' })),
      raw: { dto: EngagementQueryDto, run: (app, q) => app.get(EngagementService).report(q) },
      target: 'filter-attribute',
    },
    {
      ...overview,
      name: 'overview ⟨page⟩',
      params: dated((n) => ({ limit: '10', filters: n % 2 ? 'page==/pricing' : 'entry_page==/blog/*' })),
      target: 'filter-page',
    },
    {
      // The sessions without a /pricing pageview (~78 %): each session tested against the page's
      // set of sessions (SQLite had scanned that set once per session: 503 at the smoke size).
      ...overview,
      name: 'overview ⟨page!=⟩',
      params: dated(() => ({ limit: '10', filters: 'page!=/pricing' })),
      target: 'filter-page',
    },
    {
      // A page few sessions saw (one of the blog posts ranked 10-109 of 1,000; /pricing is on
      // ~22 % of the sessions).
      ...overview,
      name: 'overview ⟨one post⟩',
      params: dated((n) => ({ limit: '10', filters: onePost(n) })),
      target: 'filter-page',
    },
    {
      name: 'engagement ⟨one post⟩',
      route: '/api/v1/sites/{id}/analytics/engagement',
      params: dated((n) => ({ filters: onePost(n) })),
      raw: { dto: EngagementQueryDto, run: (app, q) => app.get(EngagementService).report(q) },
      target: 'filter-page',
    },
    {
      name: 'events ⟨one post⟩',
      route: '/api/v1/sites/{id}/events',
      params: dated((n) => ({ limit: '25', filters: onePost(n) })),
      raw: {
        dto: EventsQueryDto,
        run: (app, q, dto: EventsQueryDto) => app.get(EventsService).report(q, dto),
      },
      target: 'filter-page',
    },
    {
      ...breakdown,
      name: 'breakdown sessions ⟨page⟩',
      params: dated(() => ({
        metric: 'sessions',
        dimension: 'country',
        interval: 'day',
        limit: '5',
        filters: 'page==/pricing',
      })),
      target: 'filter-page',
    },
    {
      // The sessions without a /pricing pageview by country and day: the site's session rollup
      // rows less the page's session_pages rows.
      ...breakdown,
      name: 'breakdown sessions ⟨page!=⟩',
      params: dated(() => ({
        metric: 'sessions',
        dimension: 'country',
        interval: 'day',
        limit: '5',
        filters: 'page!=/pricing',
      })),
      target: 'filter-page',
    },
    {
      name: 'engagement ⟨page⟩',
      route: '/api/v1/sites/{id}/analytics/engagement',
      params: dated(() => ({ filters: 'page==/pricing' })),
      raw: { dto: EngagementQueryDto, run: (app, q) => app.get(EngagementService).report(q) },
      target: 'filter-page',
    },
    {
      // The site's session and pageview rollups less the page's rows; the visitors' returning
      // split still counts the selected sessions' distinct visitors.
      name: 'engagement ⟨page!=⟩',
      route: '/api/v1/sites/{id}/analytics/engagement',
      params: dated(() => ({ filters: 'page!=/pricing' })),
      raw: { dto: EngagementQueryDto, run: (app, q) => app.get(EngagementService).report(q) },
      target: 'filter-page',
    },
    eventsUnderPricing,
    {
      // The sessions without a /pricing pageview: the site's event rollups less the page's.
      ...eventsUnderPricing,
      name: 'events ⟨page!=⟩',
      params: dated(() => ({ limit: '25', filters: 'page!=/pricing' })),
    },
    {
      name: 'conversions ⟨goal⟩',
      route: '/api/v1/sites/{id}/conversions',
      // Goal 3 is the big site's "Reached checkout" (/checkout*): createSites makes the big
      // site's goals first, in BIG_SITE_GOALS' order, in a database of their own.
      params: dated((n) => ({ filters: n % 2 ? 'goal==3' : 'goal!=3' })),
      raw: { dto: ConversionsQueryDto, run: (app, q) => app.get(ConversionsService).report(q) },
      target: 'filter-page',
    },
    {
      // The site's conversion rollups less the page's stored goals.
      name: 'conversions ⟨page!=⟩',
      route: '/api/v1/sites/{id}/conversions',
      params: dated(() => ({ filters: 'page!=/pricing' })),
      raw: { dto: ConversionsQueryDto, run: (app, q) => app.get(ConversionsService).report(q) },
      target: 'filter-page',
    },
    {
      name: 'ecommerce ⟨page⟩',
      route: '/api/v1/sites/{id}/ecommerce',
      params: dated(() => ({ limit: '10', filters: 'page==/pricing' })),
      raw: {
        dto: EcommerceQueryDto,
        run: (app, q, dto: EcommerceQueryDto) => app.get(EcommerceService).report(q, dto),
      },
      target: 'filter-page',
    },
    {
      // The sessions without a /pricing pageview: the sessions the site's rollups less the page's
      // rows, each order's session looked up by key.
      name: 'ecommerce ⟨page!=⟩',
      route: '/api/v1/sites/{id}/ecommerce',
      params: dated(() => ({ limit: '10', filters: 'page!=/pricing' })),
      raw: {
        dto: EcommerceQueryDto,
        run: (app, q, dto: EcommerceQueryDto) => app.get(EcommerceService).report(q, dto),
      },
      target: 'filter-page',
    },
    // After the other filtered rows: the same page condition between an import that gave
    // derived sessions `/pricing` and the next `aggregate` (run.ts aggregates after them).
    {
      ...overview,
      name: 'overview ⟨page, queued⟩',
      params: dated(() => ({ limit: '10', filters: 'page==/pricing' })),
      target: 'filter-page',
      queued: true,
    },
    {
      ...breakdown,
      name: 'breakdown pageviews ⟨page, queued⟩',
      params: dated(() => ({
        metric: 'pageviews',
        dimension: 'channel',
        interval: 'day',
        limit: '5',
        filters: 'page==/pricing',
      })),
      target: 'filter-page',
      queued: true,
    },
    { ...eventsUnderPricing, name: 'events ⟨page, queued⟩', queued: true },
  ];
}

export function pathOf(endpoint: Endpoint, siteId: number, n: number): string {
  const query = new URLSearchParams(endpoint.params(n)).toString();
  return endpoint.route.replace('{id}', String(siteId)) + (query ? `?${query}` : '');
}

/** The site's calendar day now. */
export function siteToday(site: SiteContext, now = new Date()): string {
  return DateTime.fromJSDate(now, { zone: site.timezone }).toISODate()!;
}
