import type { Provider } from '@nestjs/common';
import { AppConfig } from '@app/config';
import {
  ControllerTest,
  DATE_RANGE_PIPE_CASES,
  DATE_RANGE_RULE_CASES,
  DEFAULT_CONFIG,
  expectAccessCheckedFirst,
  expectBadRequest,
  READABLE_SITE,
  reportQueryFor,
  startControllerTest,
} from '../../../../test/support/controller-test';
import { AnalyticsController } from './analytics.controller';
import { BreakdownService } from './breakdown.service';
import { EngagementService } from './engagement.service';
import { FunnelService } from './funnel.service';
import { OverviewService } from './overview.service';
import { RealtimeService } from './realtime.service';

/** The service methods the controller calls: a rename changes SERVICES and nothing else. */
const service = {
  overview: jest.fn(),
  breakdown: jest.fn(),
  engagement: jest.fn(),
  realtime: jest.fn(),
  funnel: jest.fn(),
};
const SERVICES: Provider[] = [
  { provide: OverviewService, useValue: { report: service.overview } },
  { provide: BreakdownService, useValue: { report: service.breakdown } },
  { provide: EngagementService, useValue: { report: service.engagement } },
  { provide: RealtimeService, useValue: { report: service.realtime } },
  { provide: FunnelService, useValue: { report: service.funnel } },
];

const REPORT = { data: { answered_by: 'the mocked service' }, meta: { site_id: READABLE_SITE.id } };

const STEPS = `steps=${encodeURIComponent('[{"type":"pageview","path":"/pricing"}]')}`;

/** Each report with a date range, and the parameters it cannot do without. */
const RANGE_REPORTS: Array<[string, string]> = [
  ['overview', ''],
  ['breakdown-timeseries', 'metric=sessions&dimension=channel'],
  ['engagement', ''],
  ['funnel', STEPS],
];

const path = (report: string, ...query: string[]) => {
  const q = query.filter(Boolean).join('&');
  return `/sites/${READABLE_SITE.id}/analytics/${report}${q ? `?${q}` : ''}`;
};

const stepsParam = (json: string) => `steps=${encodeURIComponent(json)}`;

describe(AnalyticsController.name, () => {
  let sut: ControllerTest;

  beforeAll(async () => {
    sut = await startControllerTest(AnalyticsController, SERVICES);
  });

  afterAll(() => sut.close());

  beforeEach(() => {
    for (const method of Object.values(service)) method.mockReset().mockResolvedValue(REPORT);
  });

  /** Asserts the exact problem body, and that the request never reached a service. */
  const expect400 = async (url: string, ...errors: Array<{ parameter: string; message: string }>) => {
    await expectBadRequest(sut, url, ...errors);
    for (const method of Object.values(service)) expect(method).not.toHaveBeenCalled();
  };

  describe.each(RANGE_REPORTS)('GET /sites/:id/analytics/%s', (report, required) => {
    it.each(DATE_RANGE_PIPE_CASES)(
      'returns 400 naming `$parameter` for $query',
      async ({ query, parameter, message }) => {
        await expect400(path(report, required, query), { parameter, message });
      },
    );

    it('checks the key, then the site, then membership, then the parameters', async () => {
      const bad = [required, 'from=2025/03/10&color=blue'].filter(Boolean).join('&');

      const res = await expectAccessCheckedFirst(sut, (site) => `/sites/${site}/analytics/${report}?${bad}`);

      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { parameter: 'color', message: 'color is not a known parameter' },
        { parameter: 'from', message: 'from must be a date in YYYY-MM-DD format' },
      ]);
      for (const method of Object.values(service)) expect(method).not.toHaveBeenCalled();
    });

    it('returns 400 naming `id` when the site id is not a positive integer', async () => {
      const url = `/sites/0/analytics/${report}${required ? `?${required}` : ''}`;
      await expect400(url, { parameter: 'id', message: 'id must be a positive integer site id' });
    });
  });

  describe('GET /sites/:id/analytics/overview', () => {
    it('passes the site and the parsed parameters to the service and returns its report', async () => {
      const res = await sut.get(
        path(
          'overview',
          'from=2025-03-10&to=2025-03-12&timezone=America/New_York&limit=5&compare=year_over_year&format=json',
        ),
      );

      expect(res.status).toBe(200);
      expect(res.body).toEqual(REPORT);
      expect(service.overview).toHaveBeenCalledWith(
        reportQueryFor({
          from: '2025-03-10',
          to: '2025-03-12',
          timezone: 'America/New_York',
          limit: 5,
          compare: 'year_over_year',
          format: 'json',
        }),
        {
          from: '2025-03-10',
          to: '2025-03-12',
          timezone: 'America/New_York',
          limit: 5,
          compare: 'year_over_year',
          format: 'json',
        },
      );
    });

    it('gives limit its default of 10', async () => {
      await sut.get(path('overview')).expect(200);

      expect(service.overview).toHaveBeenCalledWith(reportQueryFor({ limit: 10 }), { limit: 10 });
    });

    it.each([
      { query: 'limit=0', message: 'limit must be at least 1' },
      { query: 'limit=101', message: 'limit must be at most 100' },
      { query: 'limit=1.5', message: 'limit must be an integer' },
      { query: 'limit=1e1', message: 'limit must be an integer' },
      { query: 'limit=ten', message: 'limit must be an integer' },
      { query: 'limit=1&limit=2', message: 'limit must be given once, as a single value' },
    ])('returns 400 naming `limit` for $query', async ({ query, message }) => {
      await expect400(path('overview', query), { parameter: 'limit', message });
    });

    it('returns 400 naming `compare` when it is not a known mode', async () => {
      await expect400(path('overview', 'compare=last_week'), {
        parameter: 'compare',
        message: 'compare must be one of: previous_period, year_over_year',
      });
    });

    it('names every offending parameter at once, its own before the date range', async () => {
      await expect400(
        path('overview', 'to=x&limit=0&compare=last_week'),
        { parameter: 'limit', message: 'limit must be at least 1' },
        { parameter: 'compare', message: 'compare must be one of: previous_period, year_over_year' },
        { parameter: 'to', message: 'to must be a date in YYYY-MM-DD format' },
      );
    });
  });

  describe('GET /sites/:id/analytics/breakdown-timeseries', () => {
    it('passes the site and the parsed parameters to the service', async () => {
      await sut
        .get(
          path(
            'breakdown-timeseries',
            'metric=conv_rate&dimension=country&interval=hour&limit=20&from=2025-03-01&to=2025-03-14',
          ),
        )
        .expect(200);

      expect(service.breakdown).toHaveBeenCalledWith(
        reportQueryFor({
          metric: 'conv_rate',
          dimension: 'country',
          interval: 'hour',
          limit: 20,
          from: '2025-03-01',
          to: '2025-03-14',
        }),
        {
          metric: 'conv_rate',
          dimension: 'country',
          interval: 'hour',
          limit: 20,
          from: '2025-03-01',
          to: '2025-03-14',
        },
      );
    });

    it('gives interval and limit their defaults of day and 5', async () => {
      await sut.get(path('breakdown-timeseries', 'metric=revenue&dimension=browser')).expect(200);

      expect(service.breakdown).toHaveBeenCalledWith(
        reportQueryFor({
          metric: 'revenue',
          dimension: 'browser',
          interval: 'day',
          limit: 5,
        }),
        {
          metric: 'revenue',
          dimension: 'browser',
          interval: 'day',
          limit: 5,
        },
      );
    });

    const METRIC = 'metric must be one of: sessions, pageviews, bounce_rate, conv_rate, revenue';
    const DIMENSION = 'dimension must be one of: channel, country, device, browser';
    const METRIC_MISSING = 'metric is required: one of sessions, pageviews, bounce_rate, conv_rate, revenue';
    const DIMENSION_MISSING = 'dimension is required: one of channel, country, device, browser';

    it('returns 400 naming `metric` when it is missing', async () => {
      await expect400(path('breakdown-timeseries', 'dimension=channel'), {
        parameter: 'metric',
        message: METRIC_MISSING,
      });
    });

    it('returns 400 naming `metric` when it is not a known metric', async () => {
      await expect400(path('breakdown-timeseries', 'metric=visits&dimension=channel'), {
        parameter: 'metric',
        message: METRIC,
      });
    });

    it('returns 400 naming `dimension` when it is missing or not a known dimension', async () => {
      await expect400(path('breakdown-timeseries', 'metric=sessions'), {
        parameter: 'dimension',
        message: DIMENSION_MISSING,
      });
      await expect400(path('breakdown-timeseries', 'metric=sessions&dimension=city'), {
        parameter: 'dimension',
        message: DIMENSION,
      });
    });

    it('returns 400 naming both when metric and dimension are missing', async () => {
      await expect400(
        path('breakdown-timeseries'),
        { parameter: 'metric', message: METRIC_MISSING },
        { parameter: 'dimension', message: DIMENSION_MISSING },
      );
    });

    it('returns 400 naming `interval` when it is not a known interval', async () => {
      await expect400(path('breakdown-timeseries', 'metric=sessions&dimension=channel&interval=minute'), {
        parameter: 'interval',
        message: 'interval must be one of: hour, day, week, month',
      });
    });

    it.each([
      { query: 'limit=0', message: 'limit must be at least 1' },
      { query: 'limit=21', message: 'limit must be at most 20' },
      { query: 'limit=2.5', message: 'limit must be an integer' },
    ])('returns 400 naming `limit` for $query', async ({ query, message }) => {
      await expect400(path('breakdown-timeseries', 'metric=sessions&dimension=channel', query), {
        parameter: 'limit',
        message,
      });
    });
  });

  describe('GET /sites/:id/analytics/engagement', () => {
    it('passes the site and the parsed parameters to the service', async () => {
      await sut.get(path('engagement', 'from=2025-03-10&to=2025-03-12&timezone=Asia/Kolkata')).expect(200);

      expect(service.engagement).toHaveBeenCalledWith(
        reportQueryFor({
          from: '2025-03-10',
          to: '2025-03-12',
          timezone: 'Asia/Kolkata',
        }),
      );
    });

    it('returns 400 naming `limit`, which it does not take', async () => {
      await expect400(path('engagement', 'limit=5'), {
        parameter: 'limit',
        message: 'limit is not a known parameter',
      });
    });
  });

  describe('GET /sites/:id/analytics/funnel', () => {
    it('passes the site, the raw steps and the parsed window to the service', async () => {
      await sut.get(path('funnel', STEPS, 'window_hours=168&from=2025-03-10&to=2025-03-12')).expect(200);

      expect(service.funnel).toHaveBeenCalledWith(
        reportQueryFor({
          steps: '[{"type":"pageview","path":"/pricing"}]',
          window_hours: 168,
          from: '2025-03-10',
          to: '2025-03-12',
        }),
        {
          steps: '[{"type":"pageview","path":"/pricing"}]',
          window_hours: 168,
          from: '2025-03-10',
          to: '2025-03-12',
        },
      );
    });

    it('gives window_hours its default of 24', async () => {
      await sut.get(path('funnel', STEPS)).expect(200);

      expect(service.funnel).toHaveBeenCalledWith(
        reportQueryFor({
          steps: '[{"type":"pageview","path":"/pricing"}]',
          window_hours: 24,
        }),
        {
          steps: '[{"type":"pageview","path":"/pricing"}]',
          window_hours: 24,
        },
      );
    });

    it('returns 400 naming `steps` when it is missing', async () => {
      await expect400(path('funnel', 'from=2025-03-10'), {
        parameter: 'steps',
        message:
          'steps is required: a JSON array of 1 to 10 steps such as [{"type":"pageview","path":"/pricing"}]',
      });
    });

    it.each([
      { query: 'window_hours=0', message: 'window_hours must be at least 1' },
      { query: 'window_hours=169', message: 'window_hours must be at most 168' },
      { query: 'window_hours=1.5', message: 'window_hours must be an integer' },
    ])('returns 400 naming `window_hours` for $query', async ({ query, message }) => {
      await expect400(path('funnel', STEPS, query), { parameter: 'window_hours', message });
    });
  });

  describe('GET /sites/:id/analytics/realtime', () => {
    it('passes the site to the service', async () => {
      const res = await sut.get(path('realtime'));

      expect(res.status).toBe(200);
      expect(res.body).toEqual(REPORT);
      expect(service.realtime).toHaveBeenCalledWith(READABLE_SITE);
    });

    it.each([
      { query: 'foo=1', parameter: 'foo' },
      { query: 'from=2025-03-10', parameter: 'from' },
      { query: 'format=json', parameter: 'format' },
    ])('returns 400 naming `$parameter`, as it takes no parameters', async ({ query, parameter }) => {
      await expect400(path('realtime', query), {
        parameter,
        message: `${parameter} is not a known parameter`,
      });
    });

    it('checks the key, then the site, then membership, then the parameters', async () => {
      const res = await expectAccessCheckedFirst(sut, (site) => `/sites/${site}/analytics/realtime?foo=1`);

      expect(res.status).toBe(400);
      expect(service.realtime).not.toHaveBeenCalled();
    });
  });

  /**
   * The range is resolved by the real StatsQueryParser, the hourly interval and the funnel steps
   * inside the services, before any query: here the real services run, and any query they
   * reached would answer 500.
   */
  describe('with the real services and no database', () => {
    let real: ControllerTest;

    beforeAll(async () => {
      real = await startControllerTest(AnalyticsController, [
        OverviewService,
        BreakdownService,
        EngagementService,
        RealtimeService,
        FunnelService,
        { provide: AppConfig, useValue: DEFAULT_CONFIG },
      ]);
    });

    afterAll(() => real.close());

    describe.each(RANGE_REPORTS)('GET /sites/:id/analytics/%s', (report, required) => {
      it.each(DATE_RANGE_RULE_CASES)(
        'returns 400 naming `$parameter` for $query',
        async ({ query, parameter, message }) => {
          await expectBadRequest(real, path(report, required, query), { parameter, message });
        },
      );
    });

    it('returns 400 naming `interval` for hour over more than 14 days', async () => {
      await expectBadRequest(
        real,
        path(
          'breakdown-timeseries',
          'metric=sessions&dimension=channel&interval=hour&from=2025-03-01&to=2025-03-15',
        ),
        {
          parameter: 'interval',
          message: 'interval hour is only available for ranges of at most 14 days (this one has 15)',
        },
      );
    });

    describe('funnel steps', () => {
      const PRICING = { type: 'pageview', path: '/pricing' };

      it.each([
        {
          case: 'is not JSON',
          steps: '[{"type":',
          message: 'steps must be valid JSON: an array such as [{"type":"pageview","path":"/pricing"}]',
        },
        {
          case: 'is not an array',
          steps: '{"type":"pageview"}',
          message: 'steps must be a JSON array of steps',
        },
        { case: 'is empty', steps: '[]', message: 'steps must hold at least 1 step' },
        {
          case: 'has a step of an unknown type',
          steps: '[{"type":"click","name":"x"}]',
          message: 'step 1 has the unknown type "click"; use "pageview" or "event"',
        },
        {
          case: 'has a step without a type',
          steps: '[{"path":"/"}]',
          message: 'step 1 has no type; use "pageview" or "event"',
        },
        {
          case: 'has a step that is not an object',
          steps: '["/pricing"]',
          message: 'step 1 must be an object with a "type"',
        },
        {
          case: 'has a pageview step without a path',
          steps: '[{"type":"pageview"}]',
          message: 'step 1 (pageview) needs a "path": a string starting with "/", at most 2048 characters',
        },
        {
          case: 'has a pageview path not starting with /',
          steps: '[{"type":"pageview","path":"pricing"}]',
          message: 'step 1 (pageview) needs a "path": a string starting with "/", at most 2048 characters',
        },
        {
          case: 'has an event step without a name',
          steps: '[{"type":"event","name":"a"},{"type":"event"}]',
          message: 'step 2 (event) needs a "name": a string of 1 to 255 characters',
        },
        {
          case: 'has a step with an unknown field',
          steps: '[{"type":"event","name":"a","path":"/"}]',
          message: 'step 1 (event) has the unknown field "path"',
        },
        {
          case: 'has 11 steps',
          steps: JSON.stringify(Array(11).fill(PRICING)),
          message: 'steps holds 11 steps; at most 10 are allowed',
        },
      ])('returns 400 naming `steps` when it $case', async ({ steps, message }) => {
        await expectBadRequest(real, path('funnel', stepsParam(steps)), { parameter: 'steps', message });
      });

      it('returns 400 naming `steps` when it is over 4 KB', async () => {
        const padding = 4097 - JSON.stringify([{ type: 'pageview', path: '/' }]).length;
        const big = JSON.stringify([{ type: 'pageview', path: `/${'a'.repeat(padding)}` }]);
        expect(Buffer.byteLength(big)).toBe(4097);

        await expectBadRequest(real, path('funnel', stepsParam(big)), {
          parameter: 'steps',
          message: 'steps is 4097 bytes long; at most 4096 bytes are allowed',
        });
      });
    });
  });
});
