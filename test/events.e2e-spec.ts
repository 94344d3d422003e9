import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { EventsController } from '../apps/api/src/events/events.controller';
import { event, pageview } from './support/hits';
import { TestEnv } from './support/test-env';

/**
 * Site in America/New_York. February 2026 is EST (UTC−5), so the range 2026-02-01..2026-02-02
 * is [2026-02-01T05:00Z, 2026-02-03T05:00Z).
 */
describe(EventsController.name, () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;
  let cliSite: number;

  const RANGE = 'from=2026-02-01&to=2026-02-02';

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ timezone: 'America/New_York', members: [user] });
    const otherSite = await env.site({ timezone: 'America/New_York', members: [user] });
    cliSite = await env.site({ members: [user] });
    key = (await env.key(user)).key;

    await env.registerEvent(site, 'signup', 'Account created', new Date('2026-01-05T10:00:00Z'));
    await env.registerEvent(site, 'download', null, new Date('2026-01-06T10:00:00Z'));
    await env.registerEvent(site, 'checkout', 'Checkout started', new Date('2026-01-07T10:00:00Z'));
    await env.registerEvent(site, 'newsletter', null, new Date('2026-01-08T10:00:00Z'));
    await env.registerEvent(site, 'alpha', null, new Date('2026-01-09T10:00:00Z'));
    await env.registerEvent(otherSite, 'signup');

    const imported = await env.importHits([
      // signup: s1 twice and s2 once in range; s3 once just before the range start and once at its end.
      event(site, 's1', '2026-02-01T06:00:00Z', 'signup'),
      event(site, 's1', '2026-02-01T07:00:00Z', 'signup'),
      event(site, 's2', '2026-02-02T12:00:00Z', 'signup'),
      event(site, 's3', '2026-02-01T04:59:59.999Z', 'signup'), // 2026-01-31 23:59:59.999 EST
      event(site, 's3', '2026-02-03T05:00:00.000Z', 'signup'), // 2026-02-03 00:00 EST: after the range
      // download: three sessions, the first exactly at the range start, the last in its last millisecond.
      event(site, 's4', '2026-02-01T05:00:00.000Z', 'download'),
      event(site, 's5', '2026-02-03T04:59:59.999Z', 'download'),
      event(site, 's6', '2026-02-02T09:00:00Z', 'download'),
      // checkout: once.
      event(site, 's1', '2026-02-01T10:00:00Z', 'checkout'),
      // Unregistered names (event names are case-sensitive): never listed, never counted.
      event(site, 's1', '2026-02-01T08:00:00Z', 'promo_click'),
      event(site, 's2', '2026-02-01T08:00:00Z', 'promo_click'),
      event(site, 's2', '2026-02-01T09:00:00Z', 'Signup'),
      // A pageview is not an event, even on a path that looks like one.
      pageview(site, 's1', '2026-02-01T06:30:00Z', '/signup'),
      // The other site's signup hits do not count here.
      event(otherSite, 'o1', '2026-02-01T12:00:00Z', 'signup'),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (url: string) => request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`);

  it('lists every registered event by occurrences desc, then name, with zeros for events without hits', async () => {
    const res = await get(`/api/v1/sites/${site}/events?${RANGE}`);
    expect(res.status).toBe(200);
    // download: s4 + s5 + s6 = 3 hits in 3 sessions; signup: 2 (s1) + 1 (s2) = 3 hits in 2 sessions;
    // the tie on 3 is broken by name: download < signup. checkout: 1 in s1. alpha and newsletter: 0.
    expect(res.body.data).toEqual([
      {
        name: 'download',
        description: null,
        registered_at: '2026-01-06T10:00:00.000Z',
        occurrences: 3,
        sessions: 3,
      },
      {
        name: 'signup',
        description: 'Account created',
        registered_at: '2026-01-05T10:00:00.000Z',
        occurrences: 3,
        sessions: 2,
      },
      {
        name: 'checkout',
        description: 'Checkout started',
        registered_at: '2026-01-07T10:00:00.000Z',
        occurrences: 1,
        sessions: 1,
      },
      {
        name: 'alpha',
        description: null,
        registered_at: '2026-01-09T10:00:00.000Z',
        occurrences: 0,
        sessions: 0,
      },
      {
        name: 'newsletter',
        description: null,
        registered_at: '2026-01-08T10:00:00.000Z',
        occurrences: 0,
        sessions: 0,
      },
    ]);
    expect(res.body.meta).toEqual({
      site_id: site,
      from: '2026-02-01',
      to: '2026-02-02',
      timezone: 'America/New_York',
      page: 1,
      limit: 100,
      total: 5,
      filters: [],
    });
  });

  it('does not list hits of unregistered event names', async () => {
    const res = await get(`/api/v1/sites/${site}/events?${RANGE}`);
    const names = res.body.data.map((e: { name: string }) => e.name);
    expect(names).not.toContain('promo_click');
    expect(names).not.toContain('Signup');
  });

  it('counts by the calendar days of the timezone parameter', async () => {
    // In UTC the range is [2026-02-01T00:00Z, 2026-02-03T00:00Z): s3's 04:59:59.999Z signup joins
    // (signup 3 + 1 = 4 hits in s1, s2, s3 = 3 sessions) and s5's 2026-02-03T04:59:59.999Z download leaves
    // (download 3 − 1 = 2 hits in 2 sessions).
    const res = await get(`/api/v1/sites/${site}/events?${RANGE}&timezone=UTC`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({ name: 'signup', occurrences: 4, sessions: 3 }),
      expect.objectContaining({ name: 'download', occurrences: 2, sessions: 2 }),
      expect.objectContaining({ name: 'checkout', occurrences: 1, sessions: 1 }),
      expect.objectContaining({ name: 'alpha', occurrences: 0, sessions: 0 }),
      expect.objectContaining({ name: 'newsletter', occurrences: 0, sessions: 0 }),
    ]);
    expect(res.body.meta.timezone).toBe('UTC');
  });

  it('paginates in the same order, with the total over all pages', async () => {
    const names = async (query: string) => {
      const res = await get(`/api/v1/sites/${site}/events?${RANGE}&${query}`);
      expect(res.status).toBe(200);
      return { names: res.body.data.map((e: { name: string }) => e.name), meta: res.body.meta };
    };
    const page1 = await names('page=1&limit=2');
    expect(page1.names).toEqual(['download', 'signup']);
    expect(page1.meta).toMatchObject({ page: 1, limit: 2, total: 5 });
    expect((await names('page=2&limit=2')).names).toEqual(['checkout', 'alpha']);
    expect((await names('page=3&limit=2')).names).toEqual(['newsletter']);
    const beyond = await names('page=4&limit=2');
    expect(beyond.names).toEqual([]);
    expect(beyond.meta).toMatchObject({ page: 4, limit: 2, total: 5 });
  });

  it('lists an event registered with the CLI, with its description and 0 occurrences', async () => {
    const registered = await env.cli([
      'events:register',
      '--site',
      String(cliSite),
      '--name',
      'trial_started',
      '--description',
      'A free trial began',
      '--json',
    ]);
    expect(registered.code).toBe(0);
    expect(registered.json).toEqual({ id: expect.any(Number) });
    const res = await get(`/api/v1/sites/${cliSite}/events?${RANGE}`);
    expect(res.body.data).toEqual([
      {
        name: 'trial_started',
        description: 'A free trial began',
        registered_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        occurrences: 0,
        sessions: 0,
      },
    ]);
    expect(res.body.meta.total).toBe(1);
  });

  it('registers with the CLI an event name of 255 characters outside the Basic Multilingual Plane', async () => {
    // The tracker accepts names of up to 255 characters (not UTF-16 units); 200 emoji are 400 units.
    const name = '🎉'.repeat(200);
    const registered = await env.cli([
      'events:register',
      '--site',
      String(cliSite),
      '--name',
      name,
      '--json',
    ]);
    expect(registered.code).toBe(0);
    const tooLong = await env.cli([
      'events:register',
      '--site',
      String(cliSite),
      '--name',
      'x'.repeat(256),
      '--json',
    ]);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('--name must be 1–255 characters');
  });

  it.each([
    ['page=0', 'page'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['sort=name', 'sort'],
    ['from=2026-02-30&to=2026-03-01', 'from'],
    ['from=2026/02/01', 'from'],
    ['to=yesterday', 'to'],
    ['from=2026-02-03&to=2026-02-01', 'from'],
    ['timezone=Mars/Olympus_Mons', 'timezone'],
    ['from=2024-01-01&to=2026-01-01', 'from'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const res = await get(`/api/v1/sites/${site}/events?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual([expect.objectContaining({ parameter })]);
  });
});
