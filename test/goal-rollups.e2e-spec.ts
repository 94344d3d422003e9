import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser } from '@app/stats';
import request from 'supertest';
import { BreakdownService } from '../apps/api/src/analytics/breakdown.service';
import { ConversionsService } from '../apps/api/src/conversions/conversions.service';
import { event, pageview } from './support/hits';
import { random } from './support/random';
import { TestEnv } from './support/test-env';

const MONTH_START = Date.parse('2026-03-01T00:00:00Z');
const MONTH_MS = 31 * 86_400_000;
const PATHS = ['/', '/pricing', '/blog/a', '/blog/b', '/docs/x'];
const COUNTRIES = ['DE', 'US', 'NP'];

interface Hit {
  type: string;
  session_id: string;
  ts: string;
  path?: string;
  name?: string;
  country?: string;
}

/**
 * 200 sessions over March 2026 in two imports: the second adds, to a third of the sessions,
 * an earlier hit with another country (their start, bucket and attribute move) and a goal hit
 * after the others, and brings 40 new sessions.
 */
function fixture(siteId: number, seed: number): Hit[][] {
  const rnd = random(seed);
  const imports: Hit[][] = [[], []];
  for (let s = 0; s < 240; s++) {
    const session = `g${seed}-${s}`;
    const start = MONTH_START + Math.floor(rnd.next() * MONTH_MS);
    const batch = s >= 200 ? 1 : 0;
    const country = rnd.pick(COUNTRIES);
    for (let h = 0; h < rnd.int(1, 4); h++) {
      const ts = new Date(start + h * rnd.int(30, 600) * 1000).toISOString();
      imports[batch].push(
        rnd.next() < 0.75
          ? pageview(siteId, session, ts, rnd.pick(PATHS), { country })
          : event(siteId, session, ts, rnd.pick(['signup', 'play']), { country }),
      );
    }
    if (batch === 0 && s % 3 === 0) {
      const earlier = new Date(start - rnd.int(1, 40) * 60_000).toISOString();
      imports[1].push(pageview(siteId, session, earlier, '/', { country: rnd.pick(COUNTRIES) }));
      const after = new Date(start + 3_000_000).toISOString();
      imports[1].push(
        rnd.next() < 0.5
          ? event(siteId, session, after, 'signup', { country })
          : pageview(siteId, session, after, '/pricing', { country }),
      );
    }
  }
  return imports;
}

type Goal = { id: number; type: 'event' | 'path'; match: string };

/** SPEC §1 over the hits imported so far, independently of the service: per goal, the sessions of [from, to) that converted it. */
function expectedConversions(hits: Hit[], goals: Goal[], from: number, to: number) {
  const sessions = new Map<string, Hit[]>();
  for (const h of hits) sessions.set(h.session_id, [...(sessions.get(h.session_id) ?? []), h]);
  const matches = (g: Goal, h: Hit) =>
    g.type === 'event'
      ? h.type === 'event' && h.name === g.match
      : h.type === 'pageview' &&
        (g.match.endsWith('*') ? h.path!.startsWith(g.match.slice(0, -1)) : h.path === g.match);
  let count = 0;
  let converted = 0;
  const perGoal = goals.map(() => 0);
  for (const list of sessions.values()) {
    const start = Math.min(...list.map((h) => Date.parse(h.ts)));
    if (start < from || start >= to) continue;
    count++;
    const hit = goals.map((g) => list.some((h) => matches(g, h)));
    if (hit.some(Boolean)) converted++;
    hit.forEach((yes, i) => (perGoal[i] += yes ? 1 : 0));
  }
  return { sessions: count, converted_sessions: converted, goals: perGoal };
}

/**
 * The conversion rollups (issue #10): `aggregate` keeps goal_rollups and converted_rollups in
 * step with the sessions and builds them for goals created (or drops them for goals deleted)
 * since it last ran; conversions and breakdown conv_rate read them, with the queued sessions
 * read raw on top, and read the raw tables while the rollups do not hold the site's goals.
 */
describe('Conversion rollups', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  const goals: Goal[] = [];
  let imports: Hit[][];
  const imported: Hit[] = [];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'UTC', members: [user] });
    site = { id, timezone: 'UTC', currency: 'USD', trackingMode: 'full' };
    for (const [type, match] of [
      ['event', 'signup'],
      ['path', '/pricing'],
    ] as const) {
      goals.push({ id: await env.goal(id, match, type, match), type, match });
    }
    imports = fixture(id, 7);
    expect((await env.importHits(imports[0])).rejections).toEqual([]);
    imported.push(...imports[0]);
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const get = async (path: string, params: object) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}${path}`)
      .query(params)
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return res.body as { data: Record<string, unknown> };
  };
  const MARCH = { from: '2026-03-01', to: '2026-03-31' };
  const conversions = async () => {
    const { data } = await get('/conversions', MARCH);
    return {
      sessions: data.sessions,
      converted_sessions: data.converted_sessions,
      goals: (data.goals as Array<{ conversions: number }>).map((g) => g.conversions),
    };
  };
  const expected = () => expectedConversions(imported, goals, MONTH_START, MONTH_START + MONTH_MS);
  const rollupRows = async () => ({
    goals: await env.ds.query(
      'SELECT goal_id, bucket, sessions FROM goal_rollups WHERE site_id = ? ORDER BY goal_id, bucket',
      [site.id],
    ),
    goalDays: await env.ds.query(
      'SELECT goal_id, bucket, sessions FROM goal_day_rollups WHERE site_id = ? ORDER BY goal_id, bucket',
      [site.id],
    ),
    converted: await env.ds.query(
      'SELECT dimension, bucket, value, sessions FROM converted_rollups WHERE site_id = ? ORDER BY dimension, bucket, value',
      [site.id],
    ),
    convertedDays: await env.ds.query(
      'SELECT dimension, bucket, value, sessions FROM converted_day_rollups WHERE site_id = ? ORDER BY dimension, bucket, value',
      [site.id],
    ),
    goalAttributes: await env.ds.query(
      `SELECT goal_id, bucket, channel, source, country, device, browser, sessions FROM goal_attribute_rollups
       WHERE site_id = ? ORDER BY goal_id, bucket, attributes_hash`,
      [site.id],
    ),
    goalAttributeDays: await env.ds.query(
      `SELECT goal_id, bucket, channel, source, country, device, browser, sessions FROM goal_attribute_day_rollups
       WHERE site_id = ? ORDER BY goal_id, bucket, attributes_hash`,
      [site.id],
    ),
    sessionGoals: await env.ds.query(
      'SELECT session_id, goal_id, started_at FROM session_goals WHERE site_id = ? ORDER BY session_id, goal_id',
      [site.id],
    ),
  });
  /** Stored goals whose start is not their session's (or whose session is gone): none, ever. */
  const startsOff = async () =>
    (
      await env.ds.query<Array<{ session_id: string }>>(
        `SELECT sg.session_id FROM session_goals sg
         LEFT JOIN sessions s ON s.site_id = sg.site_id AND s.session_id = sg.session_id
         WHERE sg.site_id = ? AND (s.session_id IS NULL OR s.started_at <> sg.started_at)`,
        [site.id],
      )
    ).map((r) => r.session_id);
  const rolledUpGoals = async () =>
    (
      await env.ds.query<Array<{ goal_id: number | string }>>(
        'SELECT goal_id FROM rolled_up_goals WHERE site_id = ? ORDER BY goal_id',
        [site.id],
      )
    ).map((r) => Number(r.goal_id));
  /** What the same requests give from the raw tables alone. */
  const raw = async (params: object = MARCH) => {
    const query = { ...(await app.get(StatsQueryParser).parse(site, params)), tables: 'raw' as const };
    return JSON.parse(JSON.stringify(await app.get(ConversionsService).report(query))) as unknown;
  };
  const rawBreakdown = async (
    params: {
      metric: 'conv_rate';
      dimension: 'country';
      interval: 'day';
      limit: number;
    },
    filters?: string,
  ) => {
    const scoped = filters === undefined ? MARCH : { ...MARCH, filters };
    const query = { ...(await app.get(StatsQueryParser).parse(site, scoped)), tables: 'raw' as const };
    return JSON.parse(JSON.stringify(await app.get(BreakdownService).report(query, params))) as unknown;
  };
  const BREAKDOWN = { metric: 'conv_rate', dimension: 'country', interval: 'day', limit: 2 } as const;

  it('rolls up the goals at the first aggregate, and the reports read the rollups', async () => {
    expect(await rolledUpGoals()).toEqual([]);
    const run = await env.aggregateRun();
    expect(run.goalSites).toBeGreaterThanOrEqual(1);
    expect(await rolledUpGoals()).toEqual(goals.map((g) => g.id));
    expect(await conversions()).toEqual(expected());
    expect((await get('/analytics/breakdown-timeseries', { ...MARCH, ...BREAKDOWN })).data).toEqual(
      ((await rawBreakdown(BREAKDOWN)) as { data: unknown }).data,
    );
    // The report reads them: a row changed by hand shows in it. March is whole days of the
    // site's zone, so its goal counts are read from the day rows alone.
    const bump = async (table: string, n: number) => {
      const [row] = await env.ds.query<Array<{ bucket: unknown }>>(
        `SELECT bucket FROM ${table} WHERE site_id = ? AND goal_id = ? ORDER BY bucket LIMIT 1`,
        [site.id, goals[1].id],
      );
      await env.ds.query(
        `UPDATE ${table} SET sessions = sessions + ? WHERE site_id = ? AND goal_id = ? AND bucket = ?`,
        [n, site.id, goals[1].id, row.bucket],
      );
    };
    await bump('goal_day_rollups', 1000);
    try {
      expect((await conversions()).goals[1]).toBe(expected().goals[1] + 1000);
    } finally {
      await bump('goal_day_rollups', -1000);
    }
    // The 15-minute rows are read only where the range cuts a site day: every row of the goal
    // up by one changes the UTC month by nothing, and March in Kathmandu (+05:45) by the rows of
    // its two ragged edges, [Feb 28 18:15, Mar 1 00:00) and [Mar 31 00:00, Mar 31 18:15) UTC.
    const bumpQuarters = (n: number) =>
      env.ds.query('UPDATE goal_rollups SET sessions = sessions + ? WHERE site_id = ? AND goal_id = ?', [
        n,
        site.id,
        goals[1].id,
      ]);
    const kathmandu = { ...MARCH, timezone: 'Asia/Kathmandu' };
    const [from, to] = [Date.parse('2026-02-28T18:15:00Z'), Date.parse('2026-03-31T18:15:00Z')];
    const [{ n: edgeRows }] = await env.ds.query<Array<{ n: number }>>(
      `SELECT COUNT(*) AS n FROM goal_rollups WHERE site_id = ? AND goal_id = ?
         AND ((bucket >= ? AND bucket < ?) OR (bucket >= ? AND bucket < ?))`,
      [
        site.id,
        goals[1].id,
        new Date(from),
        new Date(MONTH_START),
        new Date(MONTH_START + 30 * 86_400_000),
        new Date(to),
      ],
    );
    expect(Number(edgeRows)).toBeGreaterThan(0);
    const goalCount = async (params: object) =>
      ((await get('/conversions', params)).data.goals as Array<{ conversions: number }>)[1].conversions;
    expect(await goalCount(kathmandu)).toBe(expectedConversions(imported, goals, from, to).goals[1]);
    await bumpQuarters(1);
    try {
      expect(await goalCount(MARCH)).toBe(expected().goals[1]);
      expect(await goalCount(kathmandu)).toBe(
        expectedConversions(imported, goals, from, to).goals[1] + Number(edgeRows),
      );
    } finally {
      await bumpQuarters(-1);
    }
    expect(await conversions()).toEqual(expected());
    // So does breakdown conv_rate, from converted_rollups (by local day of the site: its day rows).
    const bumpConverted = async (n: number) => {
      for (const table of ['converted_rollups', 'converted_day_rollups']) {
        await env.ds.query(
          `UPDATE ${table} SET sessions = sessions + ? WHERE site_id = ? AND dimension IN ('channel', 'country')`,
          [n, site.id],
        );
      }
    };
    await bumpConverted(1);
    try {
      expect((await conversions()).converted_sessions).toBeGreaterThan(expected().converted_sessions);
      expect((await get('/analytics/breakdown-timeseries', { ...MARCH, ...BREAKDOWN })).data).not.toEqual(
        ((await rawBreakdown(BREAKDOWN)) as { data: unknown }).data,
      );
    } finally {
      await bumpConverted(-1);
    }
  });

  it('counts sessions queued for aggregation from their hits, as the raw path does', async () => {
    // Earlier hits (start, bucket and country move) and goal hits, not aggregated yet.
    expect((await env.importHits(imports[1])).rejections).toEqual([]);
    imported.push(...imports[1]);
    const http = await get('/conversions', MARCH);
    expect(http).toEqual(await raw());
    expect((await get('/analytics/breakdown-timeseries', { ...MARCH, ...BREAKDOWN })).data).toEqual(
      ((await rawBreakdown(BREAKDOWN)) as { data: unknown }).data,
    );
    // Under conditions on attributes (the goal attribute rollups, and the queued sessions as
    // their rows stand), and on attributes with a page (the stored goals).
    for (const filters of ['country==DE|FR', 'country!=DE', `country==US;page==/pricing`]) {
      const scoped = { ...MARCH, filters };
      expect(await get('/conversions', scoped)).toEqual(await raw(scoped));
      expect((await get('/analytics/breakdown-timeseries', { ...scoped, ...BREAKDOWN })).data).toEqual(
        ((await rawBreakdown(BREAKDOWN, filters)) as { data: unknown }).data,
      );
    }
    // The earlier hits move sessions' starts: their stored goals move with them.
    const storedStarts = async () =>
      new Map(
        (
          await env.ds.query<Array<{ session_id: string; goal_id: number | string; started_at: unknown }>>(
            'SELECT session_id, goal_id, started_at FROM session_goals WHERE site_id = ?',
            [site.id],
          )
        ).map((r) => [`${r.session_id}/${r.goal_id}`, String(r.started_at)]),
      );
    const before = await storedStarts();
    expect(await startsOff()).toEqual([]);
    await env.aggregate();
    expect(await startsOff()).toEqual([]);
    const after = await storedStarts();
    expect(
      [...before].filter(([row, start]) => after.has(row) && after.get(row) !== start).length,
    ).toBeGreaterThan(0);
    expect(await conversions()).toEqual(expected());
  });

  it('keeps the rollups equal to a rebuild from scratch, and to the migrations that stored the starts and filled the attribute rows', async () => {
    const kept = await rollupRows();
    expect(kept.goals.length).toBeGreaterThan(0);
    expect(kept.converted.length).toBeGreaterThan(0);
    expect(kept.goalAttributes.length).toBeGreaterThan(kept.goals.length);
    expect(kept.goalAttributeDays.length).toBeGreaterThan(0);
    await env.ds.query('DELETE FROM rolled_up_goals WHERE site_id = ?', [site.id]);
    expect((await env.aggregateRun()).goalSites).toBe(1);
    expect(await rollupRows()).toEqual(kept);
    // The migration copies each stored goal's start from its session.
    await env.migrateAgainFrom(/SessionGoalStarts1767500000000$/);
    expect(await rollupRows()).toEqual(kept);
    expect(await startsOff()).toEqual([]);
  });

  it('rolls up a goal created after the last aggregate at the next one, and drops a deleted one', async () => {
    goals.push({
      id: await env.goal(site.id, 'Read the blog', 'path', '/blog/*'),
      type: 'path',
      match: '/blog/*',
    });
    // Not rolled up yet: the raw tables answer, with the new goal.
    expect(await rolledUpGoals()).toEqual(goals.slice(0, 2).map((g) => g.id));
    expect(await conversions()).toEqual(expected());
    expect((await env.aggregateRun()).goalSites).toBe(1);
    expect(await rolledUpGoals()).toEqual(goals.map((g) => g.id));
    expect(await conversions()).toEqual(expected());
    const withThree = await rollupRows();

    const [removed] = goals.splice(0, 1);
    await env.ds.query('DELETE FROM goals WHERE id = ?', [removed.id]);
    expect(await conversions()).toEqual(expected());
    expect((await env.aggregateRun()).goalSites).toBe(1);
    expect(await rolledUpGoals()).toEqual(goals.map((g) => g.id));
    const withTwo = await rollupRows();
    expect(withTwo.sessionGoals).toEqual(
      (withThree.sessionGoals as Array<{ goal_id: number | string }>).filter(
        (r) => Number(r.goal_id) !== removed.id,
      ),
    );
    expect(await conversions()).toEqual(expected());
    expect((await get('/analytics/breakdown-timeseries', { ...MARCH, ...BREAKDOWN })).data).toEqual(
      ((await rawBreakdown(BREAKDOWN)) as { data: unknown }).data,
    );
    // And the incremental rows equal a rebuild.
    await env.ds.query('DELETE FROM rolled_up_goals WHERE site_id = ?', [site.id]);
    await env.aggregate();
    expect(await rollupRows()).toEqual(withTwo);
  });
});
