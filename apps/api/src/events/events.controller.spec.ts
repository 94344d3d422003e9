import { LIMITS } from '@app/config';
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
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The service method the controller calls: a rename changes SERVICES and nothing else. */
const service = { list: jest.fn() };
const SERVICES: Provider[] = [{ provide: EventsService, useValue: { report: service.list } }];

const REPORT = {
  data: [
    {
      name: 'signup',
      description: 'A visitor created an account',
      registered_at: '2025-01-15T09:30:00.000Z',
      occurrences: 12,
      sessions: 9,
    },
  ],
  meta: {
    site_id: READABLE_SITE.id,
    from: '2025-03-10',
    to: '2025-03-12',
    timezone: 'UTC',
    page: 1,
    limit: 100,
    total: 1,
  },
};

const path = (...query: string[]) => {
  const q = query.filter(Boolean).join('&');
  return `/sites/${READABLE_SITE.id}/events${q ? `?${q}` : ''}`;
};

describe(EventsController.name, () => {
  let sut: ControllerTest;

  beforeAll(async () => {
    sut = await startControllerTest(EventsController, SERVICES);
  });

  afterAll(() => sut.close());

  beforeEach(() => {
    service.list.mockReset().mockResolvedValue(REPORT);
  });

  const expect400 = async (url: string, ...errors: Array<{ parameter: string; message: string }>) => {
    await expectBadRequest(sut, url, ...errors);
    expect(service.list).not.toHaveBeenCalled();
  };

  it('passes the site and the parsed parameters to the service and returns its list', async () => {
    const res = await sut.get(path('from=2025-03-10&to=2025-03-12&timezone=UTC&page=2&limit=10'));

    expect(res.status).toBe(200);
    expect(res.body).toEqual(REPORT);
    expect(service.list).toHaveBeenCalledWith(
      reportQueryFor({
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'UTC',
        page: 2,
        limit: 10,
      }),
      {
        from: '2025-03-10',
        to: '2025-03-12',
        timezone: 'UTC',
        page: 2,
        limit: 10,
      },
    );
  });

  it('gives page and limit their defaults of 1 and 100', async () => {
    await sut.get(path()).expect(200);

    expect(service.list).toHaveBeenCalledWith(reportQueryFor({ page: 1, limit: 100 }), {
      page: 1,
      limit: 100,
    });
  });

  it('answers the list as CSV for format=csv', async () => {
    const res = await sut.get(path('format=csv'));

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.text).toBe(
      'name,description,registered_at,occurrences,sessions\r\n' +
        'signup,A visitor created an account,2025-01-15T09:30:00.000Z,12,9\r\n',
    );
    expect(service.list).toHaveBeenCalledWith(reportQueryFor({ page: 1, limit: 100, format: 'csv' }), {
      page: 1,
      limit: 100,
      format: 'csv',
    });
  });

  it.each(DATE_RANGE_PIPE_CASES)(
    'returns 400 naming `$parameter` for $query',
    async ({ query, parameter, message }) => {
      await expect400(path(query), { parameter, message });
    },
  );

  it.each([
    { query: 'page=0', parameter: 'page', message: 'page must be at least 1' },
    { query: 'page=1000001', parameter: 'page', message: 'page must be at most 1000000' },
    { query: 'page=two', parameter: 'page', message: 'page must be an integer' },
    { query: 'limit=0', parameter: 'limit', message: 'limit must be at least 1' },
    {
      query: `limit=${LIMITS.maxPageSize + 1}`,
      parameter: 'limit',
      message: `limit must be at most ${LIMITS.maxPageSize}`,
    },
    { query: 'limit=ten', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'limit=1e2', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'page=1&page=2', parameter: 'page', message: 'page must be given once, as a single value' },
    { query: 'sort=name', parameter: 'sort', message: 'sort is not a known parameter' },
  ])('returns 400 naming `$parameter` for $query', async ({ query, parameter, message }) => {
    await expect400(path(query), { parameter, message });
  });

  it('checks the key, then the site, then membership, then the parameters', async () => {
    const res = await expectAccessCheckedFirst(sut, (site) => `/sites/${site}/events?page=0`);

    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ parameter: 'page', message: 'page must be at least 1' }]);
    expect(service.list).not.toHaveBeenCalled();
  });

  it('returns 400 naming `id` when the site id is not a positive integer', async () => {
    await expect400('/sites/01/events', {
      parameter: 'id',
      message: 'id must be a positive integer site id',
    });
  });

  describeDateRangeRulesWithRealService(EventsController, EventsService, (query) => path(query));
});
