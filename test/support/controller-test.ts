import { AccessRepository, AUTH_FAILURES, generateApiKey, SiteAccessGuard } from '@app/auth';
import { AppConfig, loadConfig } from '@app/config';
import type { ApiKey, Site } from '@app/db';
import { StatsQueryParser, StatsRepository } from '@app/stats';
import { ReportCacheInterceptor } from '../../apps/api/src/report-cache/report-cache.interceptor';
import { ReportCache } from '../../apps/api/src/report-cache/report-cache.service';
import type { INestApplication, Provider, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { API_PREFIX } from '../../apps/api/src/api-v1.routes';
import { GLOBAL_ENHANCERS } from '../../apps/api/src/global-enhancers';

/** The user behind TEST_KEY: a member of READABLE_SITE only. */
export const KEY_USER_ID = 7;

/** The one key the mocked access repository knows. */
export const TEST_KEY = generateApiKey();

export const READABLE_SITE: Site = {
  id: 1,
  name: 'Shop',
  domain: 'shop.example',
  timezone: 'Europe/Berlin',
  currency: 'EUR',
  trackingMode: 'full',
  createdAt: new Date('2025-01-15T09:30:00.000Z'),
};

/** Exists, but TEST_KEY's user is not a member: 403. */
export const FOREIGN_SITE: Site = { ...READABLE_SITE, id: 2, name: 'Not mine', domain: 'other.example' };

/** No site has this id: 404. */
export const MISSING_SITE_ID = 999;

/** The configuration of a deployment that sets no limits: the defaults of SPEC §3. */
const DEFAULT_ENV = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/unused' };
export const DEFAULT_CONFIG: AppConfig = loadConfig(DEFAULT_ENV);

const KEY_ROW: ApiKey = {
  id: 3,
  userId: KEY_USER_ID,
  name: 'controller spec',
  prefix: TEST_KEY.prefix,
  keyHash: TEST_KEY.hash,
  createdAt: new Date('2025-01-15T09:30:00.000Z'),
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
};

/** What the guards read, answered from the fixtures above instead of the database. */
function fixedAccess(): Pick<AccessRepository, keyof AccessRepository> {
  const sites = [READABLE_SITE, FOREIGN_SITE];
  return {
    // The key alone: the SiteAccessGuard then looks the site up with findSite and isMember.
    findKey: (hash) => Promise.resolve(hash === KEY_ROW.keyHash ? KEY_ROW : null),
    touchKey: () => Promise.resolve(),
    findSite: (id) => Promise.resolve(sites.find((s) => s.id === id) ?? null),
    isMember: (siteId, userId) => Promise.resolve(siteId === READABLE_SITE.id && userId === KEY_USER_ID),
  };
}

/**
 * The StatsQuery a controller hands its service for READABLE_SITE and these parameters: the
 * site, and the range resolved in the requested (or the site's) zone.
 */
export function reportQueryFor(params: {
  from?: string;
  to?: string;
  timezone?: string;
  [other: string]: unknown;
}): unknown {
  return expect.objectContaining({
    site: expect.objectContaining({ id: READABLE_SITE.id, timezone: READABLE_SITE.timezone }),
    range: expect.objectContaining({
      timezone: params.timezone ?? READABLE_SITE.timezone,
      ...(params.from === undefined ? {} : { from: params.from }),
      ...(params.to === undefined ? {} : { to: params.to }),
    }),
    filters: [],
  });
}

export interface ControllerTest {
  readonly app: INestApplication;
  /** GET `/api/v1` + path with TEST_KEY. */
  get(path: string): request.Test;
  /** GET `/api/v1` + path without an Authorization header. */
  getWithoutKey(path: string): request.Test;
  close(): Promise<void>;
}

/**
 * Boots one controller the way production serves it: the global guard, validation pipe,
 * problem filter and CSV interceptor of AppModule, the SiteAccessGuard, routes under /api/v1.
 * Only what lies behind them is replaced: the access repository answers from fixed fixtures
 * (TEST_KEY reads READABLE_SITE), and the spec provides the services. A dependency the spec
 * does not provide becomes an empty object, so a request that reaches a query fails with 500:
 * a spec expecting a 400 thereby also shows that no query ran.
 */
export async function startControllerTest(controller: Type, providers: Provider[]): Promise<ControllerTest> {
  const moduleRef = await Test.createTestingModule({
    controllers: [controller],
    providers: [
      ...GLOBAL_ENHANCERS,
      SiteAccessGuard,
      { provide: AccessRepository, useValue: fixedAccess() },
      // Refused keys are not charged to an address here: the rate limiter is not part of a controller.
      { provide: AUTH_FAILURES, useValue: { record: () => Promise.resolve() } },
      StatsQueryParser,
      { provide: AppConfig, useValue: DEFAULT_CONFIG },
      // The report cache runs as in production but stores nothing, so every request reaches the service.
      ReportCacheInterceptor,
      {
        provide: ReportCache,
        useValue: new ReportCache(loadConfig({ ...DEFAULT_ENV, REPORT_CACHE_MB: '0' })),
      },
      { provide: StatsRepository, useValue: { dataVersion: () => Promise.resolve('1.0:0.0:0') } },
      ...providers,
    ],
  })
    .useMocker(() => ({}))
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  app.setGlobalPrefix(API_PREFIX);
  await app.init();
  const url = (path: string) => `/${API_PREFIX}${path}`;
  return {
    app,
    get: (path) => request(app.getHttpServer()).get(url(path)).set('Authorization', `Bearer ${TEST_KEY.key}`),
    getWithoutKey: (path) => request(app.getHttpServer()).get(url(path)),
    close: () => app.close(),
  };
}

/** The problem+json 400 the API sends for the given parameter errors, as seen at `path`. */
export function badRequest(path: string, ...errors: Array<{ parameter: string; message: string }>) {
  return {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: errors.map((e) => e.message).join('; '),
    instance: `/${API_PREFIX}${path.split('?')[0]}`,
    errors,
  };
}

export interface ParameterCase {
  query: string;
  parameter: string;
  message: string;
}

/** Date-range parameters every report refuses in the validation pipe. */
export const DATE_RANGE_PIPE_CASES: ParameterCase[] = [
  { query: 'from=2025/03/10', parameter: 'from', message: 'from must be a date in YYYY-MM-DD format' },
  { query: 'from=2025-3-10', parameter: 'from', message: 'from must be a date in YYYY-MM-DD format' },
  { query: 'to=yesterday', parameter: 'to', message: 'to must be a date in YYYY-MM-DD format' },
  { query: 'color=blue', parameter: 'color', message: 'color is not a known parameter' },
  {
    query: 'from=2025-03-10&from=2025-03-11',
    parameter: 'from',
    message: 'from must be given once, as a single value',
  },
  {
    query: 'timezone=UTC&timezone=UTC',
    parameter: 'timezone',
    message: 'timezone must be given once, as a single value',
  },
  { query: 'format=xml', parameter: 'format', message: 'format must be json or csv' },
];

/**
 * Date-range rules checked where the range is resolved against the site, after the pipe:
 * calendar validity, order, length (731 days by default) and the zone.
 */
export const DATE_RANGE_RULE_CASES: ParameterCase[] = [
  {
    query: 'from=2025-03-12&to=2025-03-10',
    parameter: 'from',
    message: 'from (2025-03-12) must not be after to (2025-03-10)',
  },
  {
    // 2024-01-01..2026-01-01 = 366 + 365 + 1 days.
    query: 'from=2024-01-01&to=2026-01-01',
    parameter: 'from',
    message: 'the range 2024-01-01 to 2026-01-01 spans 732 days; at most 731 days are allowed',
  },
  {
    query: 'timezone=Mars/Olympus',
    parameter: 'timezone',
    message: "timezone 'Mars/Olympus' is not a known IANA time zone",
  },
  {
    query: 'timezone=%2B05:30',
    parameter: 'timezone',
    message: "timezone '+05:30' is not a known IANA time zone",
  },
  { query: 'from=2025-02-29', parameter: 'from', message: 'from (2025-02-29) is not a real calendar date' },
  { query: 'to=2025-13-01', parameter: 'to', message: 'to (2025-13-01) is not a real calendar date' },
];

/** Asserts that GET `url` with TEST_KEY answers exactly the problem+json 400 naming `errors`. */
export async function expectBadRequest(
  sut: ControllerTest,
  url: string,
  ...errors: Array<{ parameter: string; message: string }>
): Promise<void> {
  const res = await sut.get(url);
  expect({ status: res.status, contentType: res.headers['content-type'], body: res.body }).toEqual({
    status: 400,
    contentType: expect.stringMatching(/^application\/problem\+json/),
    body: badRequest(url, ...errors),
  });
}

/**
 * Asserts SPEC §3's order on a site route whose query is invalid: 401 without a key, then 404
 * for a missing site, then 403 for a site of another user; returns the response for a
 * readable site, which only then is judged on its parameters.
 */
export async function expectAccessCheckedFirst(
  sut: ControllerTest,
  url: (siteId: number | string) => string,
): Promise<request.Response> {
  const instance = (site: number | string) => `/${API_PREFIX}${url(site).split('?')[0]}`;

  const withoutKey = await sut.getWithoutKey(url(MISSING_SITE_ID));
  expect({
    status: withoutKey.status,
    auth: withoutKey.headers['www-authenticate'],
    body: withoutKey.body,
  }).toEqual({
    status: 401,
    auth: 'Bearer',
    body: {
      type: 'about:blank',
      title: 'Unauthorized',
      status: 401,
      detail: 'Send an API key as `Authorization: Bearer <key>`.',
      instance: instance(MISSING_SITE_ID),
    },
  });
  expect((await sut.getWithoutKey(url('abc'))).status).toBe(401);

  const missing = await sut.get(url(MISSING_SITE_ID));
  expect({ status: missing.status, body: missing.body }).toEqual({
    status: 404,
    body: {
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: `No site with id ${MISSING_SITE_ID}.`,
      instance: instance(MISSING_SITE_ID),
    },
  });

  const foreign = await sut.get(url(FOREIGN_SITE.id));
  expect({ status: foreign.status, body: foreign.body }).toEqual({
    status: 403,
    body: {
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: `This key cannot read site ${FOREIGN_SITE.id}.`,
      instance: instance(FOREIGN_SITE.id),
    },
  });

  return sut.get(url(READABLE_SITE.id));
}

/**
 * The date-range rules of DATE_RANGE_RULE_CASES, checked with the controller's real service and
 * no database: the range is resolved inside the service, before any query runs.
 */
export function describeDateRangeRulesWithRealService(
  controller: Type,
  service: Type,
  path: (query: string) => string,
): void {
  describe('with the real service and no database', () => {
    let real: ControllerTest;

    beforeAll(async () => {
      real = await startControllerTest(controller, [
        service,
        { provide: AppConfig, useValue: DEFAULT_CONFIG },
      ]);
    });

    afterAll(() => real.close());

    it.each(DATE_RANGE_RULE_CASES)(
      'returns 400 naming `$parameter` for $query',
      async ({ query, parameter, message }) => {
        await expectBadRequest(real, path(query), { parameter, message });
      },
    );
  });
}
