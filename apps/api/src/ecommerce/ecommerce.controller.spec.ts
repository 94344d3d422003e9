import type { Provider } from '@nestjs/common';
import {
  ControllerTest,
  DATE_RANGE_PIPE_CASES,
  describeDateRangeRulesWithRealService,
  expectAccessCheckedFirst,
  expectBadRequest,
  READABLE_SITE,
  reportQueryFor,
  startControllerTest,
} from '../../../../test/support/controller-test';
import { EcommerceController } from './ecommerce.controller';
import { EcommerceService } from './ecommerce.service';

/** The service method the controller calls: a rename changes SERVICES and nothing else. */
const service = { report: jest.fn() };
const SERVICES: Provider[] = [{ provide: EcommerceService, useValue: { report: service.report } }];

const REPORT = { data: { answered_by: 'the mocked service' }, meta: { site_id: READABLE_SITE.id } };

const path = (...query: string[]) => {
  const q = query.filter(Boolean).join('&');
  return `/sites/${READABLE_SITE.id}/ecommerce${q ? `?${q}` : ''}`;
};

describe(EcommerceController.name, () => {
  let sut: ControllerTest;

  beforeAll(async () => {
    sut = await startControllerTest(EcommerceController, SERVICES);
  });

  afterAll(() => sut.close());

  beforeEach(() => {
    service.report.mockReset().mockResolvedValue(REPORT);
  });

  const expect400 = async (url: string, ...errors: Array<{ parameter: string; message: string }>) => {
    await expectBadRequest(sut, url, ...errors);
    expect(service.report).not.toHaveBeenCalled();
  };

  it('passes the site and the parsed parameters to the service and returns its report', async () => {
    const res = await sut.get(path('from=2025-12-30&to=2026-01-01&timezone=Europe/Berlin&limit=100'));

    expect(res.status).toBe(200);
    expect(res.body).toEqual(REPORT);
    expect(service.report).toHaveBeenCalledWith(
      reportQueryFor({
        from: '2025-12-30',
        to: '2026-01-01',
        timezone: 'Europe/Berlin',
        limit: 100,
      }),
      {
        from: '2025-12-30',
        to: '2026-01-01',
        timezone: 'Europe/Berlin',
        limit: 100,
      },
    );
  });

  it('gives limit its default of 10', async () => {
    await sut.get(path()).expect(200);

    expect(service.report).toHaveBeenCalledWith(reportQueryFor({ limit: 10 }), { limit: 10 });
  });

  it.each(DATE_RANGE_PIPE_CASES)(
    'returns 400 naming `$parameter` for $query',
    async ({ query, parameter, message }) => {
      await expect400(path(query), { parameter, message });
    },
  );

  it.each([
    { query: 'limit=0', parameter: 'limit', message: 'limit must be at least 1' },
    { query: 'limit=101', parameter: 'limit', message: 'limit must be at most 100' },
    { query: 'limit=2.5', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'limit=-1', parameter: 'limit', message: 'limit must be at least 1' },
    { query: 'limit=5&limit=6', parameter: 'limit', message: 'limit must be given once, as a single value' },
    { query: 'page=1', parameter: 'page', message: 'page is not a known parameter' },
    { query: 'currency=USD', parameter: 'currency', message: 'currency is not a known parameter' },
  ])('returns 400 naming `$parameter` for $query', async ({ query, parameter, message }) => {
    await expect400(path(query), { parameter, message });
  });

  it('checks the key, then the site, then membership, then the parameters', async () => {
    const res = await expectAccessCheckedFirst(sut, (site) => `/sites/${site}/ecommerce?limit=101`);

    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ parameter: 'limit', message: 'limit must be at most 100' }]);
    expect(service.report).not.toHaveBeenCalled();
  });

  it('returns 400 naming `id` when the site id is not a positive integer', async () => {
    await expect400('/sites/-1/ecommerce', {
      parameter: 'id',
      message: 'id must be a positive integer site id',
    });
  });

  describeDateRangeRulesWithRealService(EcommerceController, EcommerceService, (query) => path(query));
});
