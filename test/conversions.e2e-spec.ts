import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { ConversionsController } from '../apps/api/src/conversions/conversions.controller';
import { event, pageview } from './support/hits';
import { TestEnv } from './support/test-env';

/**
 * Site in Asia/Kolkata (UTC+05:30, no DST): the range 2026-03-10..2026-03-11 is
 * [2026-03-09T18:30Z, 2026-03-11T18:30Z).
 */
describe(ConversionsController.name, () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;
  let bareSite: number;
  const goals: Record<string, number> = {};

  const RANGE = 'from=2026-03-10&to=2026-03-11';

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ timezone: 'Asia/Kolkata', members: [user] });
    const otherSite = await env.site({ timezone: 'Asia/Kolkata', members: [user] });
    bareSite = await env.site({ members: [user] });
    key = (await env.key(user)).key;

    goals.signup = await env.goal(site, 'Signed up', 'event', 'signup');
    // The path goal with `*` is created by the real CLI, as an operator would.
    const docs = await env.cli([
      'goals:create',
      '--site',
      String(site),
      '--name',
      'Read the docs',
      '--path',
      '/docs/*',
      '--json',
    ]);
    expect(docs.code).toBe(0);
    goals.docs = Number(docs.json!.id);
    goals.pricing = await env.goal(site, 'Saw pricing', 'path', '/pricing');
    goals.never = await env.goal(site, 'Never reached', 'event', 'never');
    await env.goal(otherSite, 'Other site signup', 'event', 'signup');

    const imported = await env.importHits([
      // A: two docs pageviews and two signups: converts signup and docs, each once; converted once.
      pageview(site, 'A', '2026-03-10T05:00:00Z', '/docs/intro'),
      pageview(site, 'A', '2026-03-10T05:01:00Z', '/docs/api'),
      event(site, 'A', '2026-03-10T05:02:00Z', 'signup'),
      event(site, 'A', '2026-03-10T05:03:00Z', 'signup'),
      // B: '/docs' lacks the prefix '/docs/', '/pricing/' is not '/pricing': no conversion.
      pageview(site, 'B', '2026-03-10T06:00:00Z', '/docs'),
      pageview(site, 'B', '2026-03-10T06:01:00Z', '/pricing/'),
      // C: pricing.
      pageview(site, 'C', '2026-03-10T07:00:00Z', '/pricing'),
      // D: starts 23:30 local on the 11th; its signup at 00:30 local on the 12th, after the range end,
      // still converts: the conversion belongs to the range of the session start.
      pageview(site, 'D', '2026-03-11T18:00:00Z', '/home'),
      event(site, 'D', '2026-03-11T19:00:00Z', 'signup'),
      // E: starts 23:59:59 local on the 9th, before the range: its in-range signup does not count.
      pageview(site, 'E', '2026-03-09T18:29:59Z', '/home'),
      event(site, 'E', '2026-03-09T18:31:00Z', 'signup'),
      // F: goal matching is case-sensitive.
      event(site, 'F', '2026-03-10T08:00:00Z', 'Signup'),
      pageview(site, 'F', '2026-03-10T08:01:00Z', '/Docs/intro'),
      // G: a path goal matches pageviews only, an event goal event hits only.
      event(site, 'G', '2026-03-10T09:00:00Z', 'click', { path: '/docs/intro' }),
      event(site, 'G', '2026-03-10T09:01:00Z', '/pricing'),
      pageview(site, 'G', '2026-03-10T09:02:00Z', '/signup'),
      // H: starts exactly at the range start (00:00 local on the 10th); '/docs/' itself has the prefix.
      pageview(site, 'H', '2026-03-09T18:30:00Z', '/docs/'),
      // The other site's sessions are not counted here.
      event(otherSite, 'O', '2026-03-10T05:00:00Z', 'signup'),
    ]);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (url: string) => request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`);

  it('counts the sessions of the range that converted each goal, and each converted session once', async () => {
    const res = await get(`/api/v1/sites/${site}/conversions?${RANGE}`);
    expect(res.status).toBe(200);
    // Sessions started in range: A, B, C, D, F, G, H = 7 (E started before it).
    // signup: A, D = 2 → 2/7 = 28.571…% → 28.57; docs: A, H = 2 → 28.57; pricing: C = 1 → 14.285…% → 14.29.
    // Converted: A (two goals, once), C, D, H = 4 → 4/7 = 57.142…% → 57.14 (the goals sum to 5).
    expect(res.body).toEqual({
      data: {
        sessions: 7,
        converted_sessions: 4,
        conversion_rate: 57.14,
        goals: [
          {
            id: goals.signup,
            name: 'Signed up',
            type: 'event',
            match: 'signup',
            conversions: 2,
            conversion_rate: 28.57,
          },
          {
            id: goals.docs,
            name: 'Read the docs',
            type: 'path',
            match: '/docs/*',
            conversions: 2,
            conversion_rate: 28.57,
          },
          {
            id: goals.pricing,
            name: 'Saw pricing',
            type: 'path',
            match: '/pricing',
            conversions: 1,
            conversion_rate: 14.29,
          },
          {
            id: goals.never,
            name: 'Never reached',
            type: 'event',
            match: 'never',
            conversions: 0,
            conversion_rate: 0,
          },
        ],
      },
      meta: { site_id: site, from: '2026-03-10', to: '2026-03-11', timezone: 'Asia/Kolkata', filters: [] },
    });
  });

  it('attributes sessions by their start in the days of the timezone parameter', async () => {
    // UTC range [2026-03-10T00:00Z, 2026-03-12T00:00Z): A, B, C, D, F, G = 6 sessions (H started
    // 2026-03-09T18:30Z). signup: A, D = 2 → 33.33; docs: A = 1 → 16.67; pricing: C = 1 → 16.67;
    // converted: A, C, D = 3 → 50.
    const res = await get(`/api/v1/sites/${site}/conversions?${RANGE}&timezone=UTC`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sessions: 6, converted_sessions: 3, conversion_rate: 50 });
    expect(
      res.body.data.goals.map((g: { conversions: number; conversion_rate: number }) => [
        g.conversions,
        g.conversion_rate,
      ]),
    ).toEqual([
      [2, 33.33],
      [1, 16.67],
      [1, 16.67],
      [0, 0],
    ]);
    expect(res.body.meta.timezone).toBe('UTC');
  });

  it('answers zeros, not errors, for a range without sessions', async () => {
    const res = await get(`/api/v1/sites/${site}/conversions?from=2025-01-01&to=2025-01-31`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sessions: 0, converted_sessions: 0, conversion_rate: 0 });
    expect(res.body.data.goals.map((g: { conversions: number }) => g.conversions)).toEqual([0, 0, 0, 0]);
    expect(res.body.data.goals.map((g: { conversion_rate: number }) => g.conversion_rate)).toEqual([
      0, 0, 0, 0,
    ]);
  });

  it('answers an empty goal list for a site without goals', async () => {
    const res = await get(`/api/v1/sites/${bareSite}/conversions?${RANGE}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ sessions: 0, converted_sessions: 0, conversion_rate: 0, goals: [] });
  });

  it.each([
    ['limit=10', 'limit'],
    ['from=2026-02-30', 'from'],
    ['to=2026-3-1', 'to'],
    ['from=2026-03-12&to=2026-03-10', 'from'],
    ['timezone=Nowhere/Land', 'timezone'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const res = await get(`/api/v1/sites/${site}/conversions?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ parameter })]);
  });

  it('answers 400 for a repeated parameter', async () => {
    const res = await get(`/api/v1/sites/${site}/conversions?from=2026-03-10&from=2026-03-11`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ parameter: 'from' })]);
  });
});
