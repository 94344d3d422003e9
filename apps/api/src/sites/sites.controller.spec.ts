import { LIMITS } from '@app/config';
import type { Provider } from '@nestjs/common';
import {
  ControllerTest,
  expectBadRequest,
  KEY_USER_ID,
  READABLE_SITE,
  startControllerTest,
} from '../../../../test/support/controller-test';
import { SitesController } from './sites.controller';
import { SitesService } from './sites.service';

/** The service method the controller calls: a rename changes SERVICES and nothing else. */
const service = { list: jest.fn() };
const SERVICES: Provider[] = [{ provide: SitesService, useValue: { list: service.list } }];

const LIST = {
  data: [
    {
      id: READABLE_SITE.id,
      name: 'Shop',
      domain: 'shop.example',
      timezone: 'Europe/Berlin',
      currency: 'EUR',
      tracking_mode: 'full',
      created_at: '2025-01-15T09:30:00.000Z',
    },
  ],
  meta: { page: 1, limit: 100, total: 1 },
};

describe(SitesController.name, () => {
  let sut: ControllerTest;

  beforeAll(async () => {
    sut = await startControllerTest(SitesController, SERVICES);
  });

  afterAll(() => sut.close());

  beforeEach(() => {
    service.list.mockReset().mockResolvedValue(LIST);
  });

  const expect400 = async (url: string, ...errors: Array<{ parameter: string; message: string }>) => {
    await expectBadRequest(sut, url, ...errors);
    expect(service.list).not.toHaveBeenCalled();
  };

  it("passes the key's user and the parsed page and limit to the service and returns its list", async () => {
    const res = await sut.get('/sites?page=3&limit=2');

    expect(res.status).toBe(200);
    expect(res.body).toEqual(LIST);
    expect(service.list).toHaveBeenCalledWith(KEY_USER_ID, 3, 2);
  });

  it('gives page and limit their defaults of 1 and 100', async () => {
    await sut.get('/sites').expect(200);

    expect(service.list).toHaveBeenCalledWith(KEY_USER_ID, 1, 100);
  });

  it('answers the list as CSV for format=csv', async () => {
    const res = await sut.get('/sites?format=csv');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="sites.csv"');
    expect(res.text).toBe(
      'id,name,domain,timezone,currency,tracking_mode,created_at\r\n' +
        '1,Shop,shop.example,Europe/Berlin,EUR,full,2025-01-15T09:30:00.000Z\r\n',
    );
  });

  it('returns 401 without a key, before looking at the parameters', async () => {
    const res = await sut.getWithoutKey('/sites?limit=0');

    expect({ status: res.status, auth: res.headers['www-authenticate'], body: res.body }).toEqual({
      status: 401,
      auth: 'Bearer',
      body: {
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: 'Send an API key as `Authorization: Bearer <key>`.',
        instance: '/api/v1/sites',
      },
    });
    expect(service.list).not.toHaveBeenCalled();
  });

  it('returns 401 for a well-formed key it does not know', async () => {
    const res = await sut.getWithoutKey('/sites').set('Authorization', `Bearer sk_${'A'.repeat(43)}`);

    expect(res.status).toBe(401);
    expect(res.body.detail).toBe('The API key is not valid.');
  });

  it.each([
    { query: 'page=0', parameter: 'page', message: 'page must be at least 1' },
    { query: 'page=-1', parameter: 'page', message: 'page must be at least 1' },
    { query: 'page=1000001', parameter: 'page', message: 'page must be at most 1000000' },
    { query: 'page=x', parameter: 'page', message: 'page must be an integer' },
    { query: 'limit=0', parameter: 'limit', message: 'limit must be at least 1' },
    {
      query: `limit=${LIMITS.maxPageSize + 1}`,
      parameter: 'limit',
      message: `limit must be at most ${LIMITS.maxPageSize}`,
    },
    { query: 'limit=abc', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'limit=1e2', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'limit=%2010', parameter: 'limit', message: 'limit must be an integer' },
    { query: 'limit=1&limit=2', parameter: 'limit', message: 'limit must be given once, as a single value' },
    { query: 'pgae=2', parameter: 'pgae', message: 'pgae is not a known parameter' },
    { query: '=1', parameter: '(unnamed)', message: '(unnamed) is not a known parameter' },
    { query: 'format=xml', parameter: 'format', message: 'format must be json or csv' },
  ])('returns 400 naming `$parameter` for $query', async ({ query, parameter, message }) => {
    await expect400(`/sites?${query}`, { parameter, message });
  });

  it('names every offending parameter at once', async () => {
    await expect400(
      '/sites?limit=0&page=x&extra=1',
      { parameter: 'extra', message: 'extra is not a known parameter' },
      { parameter: 'page', message: 'page must be an integer' },
      { parameter: 'limit', message: 'limit must be at least 1' },
    );
  });
});
