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
import { ConversionsController } from './conversions.controller';
import { ConversionsService } from './conversions.service';

/** The service method the controller calls: a rename changes SERVICES and nothing else. */
const service = { report: jest.fn() };
const SERVICES: Provider[] = [{ provide: ConversionsService, useValue: { report: service.report } }];

const REPORT = { data: { answered_by: 'the mocked service' }, meta: { site_id: READABLE_SITE.id } };

const path = (...query: string[]) => {
  const q = query.filter(Boolean).join('&');
  return `/sites/${READABLE_SITE.id}/conversions${q ? `?${q}` : ''}`;
};

describe(ConversionsController.name, () => {
  let sut: ControllerTest;

  beforeAll(async () => {
    sut = await startControllerTest(ConversionsController, SERVICES);
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
    const res = await sut.get(path('from=2025-03-10&to=2025-03-12&timezone=Asia/Kolkata&format=json'));

    expect(res.status).toBe(200);
    expect(res.body).toEqual(REPORT);
    expect(service.report).toHaveBeenCalledWith(
      reportQueryFor({
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'Asia/Kolkata',
        format: 'json',
      }),
    );
  });

  it('passes no parameter the client did not send', async () => {
    await sut.get(path()).expect(200);

    expect(service.report).toHaveBeenCalledWith(reportQueryFor({}));
  });

  it.each(DATE_RANGE_PIPE_CASES)(
    'returns 400 naming `$parameter` for $query',
    async ({ query, parameter, message }) => {
      await expect400(path(query), { parameter, message });
    },
  );

  it.each([
    { query: 'limit=10', parameter: 'limit' },
    { query: 'page=1', parameter: 'page' },
    { query: 'goal=1', parameter: 'goal' },
  ])('returns 400 naming `$parameter`, which it does not take', async ({ query, parameter }) => {
    await expect400(path(query), { parameter, message: `${parameter} is not a known parameter` });
  });

  it('checks the key, then the site, then membership, then the parameters', async () => {
    const res = await expectAccessCheckedFirst(sut, (site) => `/sites/${site}/conversions?to=yesterday`);

    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ parameter: 'to', message: 'to must be a date in YYYY-MM-DD format' }]);
    expect(service.report).not.toHaveBeenCalled();
  });

  it('returns 400 naming `id` when the site id is not a positive integer', async () => {
    await expect400('/sites/4294967296/conversions', {
      parameter: 'id',
      message: 'id must be a positive integer site id',
    });
  });

  describeDateRangeRulesWithRealService(ConversionsController, ConversionsService, (query) => path(query));
});
