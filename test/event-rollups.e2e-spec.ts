import type { INestApplication } from '@nestjs/common';
import { SiteContext, StatsQueryParser } from '@app/stats';
import {
  eventDayDeltas,
  EventLinkDelta,
  EventRollupDelta,
  eventRollupDeltas,
} from '@app/stats/rollups/event-rollup';
import { localDayBucket, rollupBucket } from '@app/stats/rollups/session-rollup';
import request from 'supertest';
import { EventsService } from '../apps/api/src/events/events.service';
import { event, pageview } from './support/hits';
import { random } from './support/random';
import { TestEnv } from './support/test-env';

const DAY_MS = 86_400_000;
const MARCH = Date.parse('2026-03-01T00:00:00Z');
const NAMES = ['signup', 'play', 'share', 'unregistered'];

interface Hit {
  type: string;
  session_id: string;
  ts: string;
  name?: string;
}

/**
 * 150 sessions of March 2026 in two imports, many of them with events in several quarter
 * hours and some across midnight (the range bounds below): the second import adds event hits
 * to a third of them, before and after their known ones, and 30 new sessions.
 */
function fixture(siteId: number): Hit[][] {
  const rnd = random(11);
  const imports: Hit[][] = [[], []];
  for (let s = 0; s < 180; s++) {
    const session = `e-${s}`;
    // Around the midnights of the 10th, 11th and 12th, or anywhere in the month.
    const start =
      s % 2 === 0
        ? MARCH + rnd.int(10, 12) * DAY_MS - rnd.int(0, 90) * 60_000
        : MARCH + Math.floor(rnd.next() * 30 * DAY_MS);
    const batch = s >= 150 ? 1 : 0;
    imports[batch].push(pageview(siteId, session, new Date(start).toISOString(), '/'));
    for (let h = 0; h < rnd.int(0, 5); h++) {
      const ts = new Date(start + rnd.int(0, 120) * 60_000).toISOString();
      imports[batch].push(event(siteId, session, ts, rnd.pick(NAMES)));
    }
    if (batch === 0 && s % 3 === 0) {
      for (const offset of [-rnd.int(1, 60), rnd.int(1, 240)]) {
        const ts = new Date(start + offset * 60_000).toISOString();
        imports[1].push(event(siteId, session, ts, rnd.pick(NAMES)));
      }
    }
  }
  return imports;
}

/**
 * The event rollups (issue #10): `aggregate` keeps, for every event name, hits and sessions by
 * quarter hour and the links between a session's consecutive quarter hours, so that the events
 * report counts distinct sessions over any range of whole quarter hours; sessions queued for
 * aggregation are read raw on top.
 */
describe('Event rollups', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: SiteContext;
  let imports: Hit[][];
  const imported: Hit[] = [];
  const registered = ['play', 'share', 'signup'];

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    key = (await env.key(user)).key;
    const id = await env.site({ timezone: 'UTC', members: [user] });
    site = { id, timezone: 'UTC', currency: 'USD', trackingMode: 'full' };
    for (const name of ['signup', 'play']) await env.registerEvent(id, name);
    imports = fixture(id);
    expect((await env.importHits(imports[0])).rejections).toEqual([]);
    imported.push(...imports[0]);
    await env.aggregate();
    // Registered after its hits were aggregated: nothing to rebuild.
    await env.registerEvent(id, 'share');
    app = await env.startApp({ REPORT_CACHE_MB: '0', RATE_LIMIT_PER_MINUTE: '100000' });
  }, 120_000);

  afterAll(() => env.close());

  const RANGES = [
    { from: '2026-03-01', to: '2026-03-31' },
    { from: '2026-03-11', to: '2026-03-11' },
    { from: '2026-03-10', to: '2026-03-11' },
    { from: '2026-03-12', to: '2026-03-12' },
  ];

  const events = async (range: { from: string; to: string }) => {
    const res = await request(app.getHttpServer())
      .get(`/api/v1/sites/${site.id}/events`)
      .query({ ...range, limit: 100 })
      .set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    return res.body as { data: Array<{ name: string; occurrences: number; sessions: number }> };
  };

  /** SPEC §4 over the hits imported so far, independently of the service. */
  const expected = (range: { from: string; to: string }) => {
    const from = Date.parse(`${range.from}T00:00:00Z`);
    const to = Date.parse(`${range.to}T00:00:00Z`) + DAY_MS;
    const rows = registered.map((name) => {
      const hits = imported.filter(
        (h) => h.type === 'event' && h.name === name && Date.parse(h.ts) >= from && Date.parse(h.ts) < to,
      );
      return { name, occurrences: hits.length, sessions: new Set(hits.map((h) => h.session_id)).size };
    });
    return rows.sort((a, b) => b.occurrences - a.occurrences || (a.name < b.name ? -1 : 1));
  };
  const counts = (body: { data: Array<{ name: string; occurrences: number; sessions: number }> }) =>
    body.data.map(({ name, occurrences, sessions }) => ({ name, occurrences, sessions }));

  const raw = async (range: { from: string; to: string }) => {
    const query = { ...(await app.get(StatsQueryParser).parse(site, range)), tables: 'raw' as const };
    return JSON.parse(
      JSON.stringify(await app.get(EventsService).report(query, { page: 1, limit: 100 })),
    ) as unknown;
  };

  /** What the three tables should hold for the hits imported so far (the pure deltas over all of them). */
  const expectedTables = () => {
    const buckets = new Map<string, { session_id: string; name: string; bucket: Date; hits: number }>();
    for (const h of imported.filter((x) => x.type === 'event')) {
      const bucket = rollupBucket(new Date(h.ts));
      const k = `${h.session_id}|${h.name}|${bucket.getTime()}`;
      const row = buckets.get(k) ?? { session_id: h.session_id, name: h.name!, bucket, hits: 0 };
      row.hits++;
      buckets.set(k, row);
    }
    const quarters = eventRollupDeltas([], [...buckets.values()]);
    const days = eventDayDeltas(quarters, localDayBucket(site.timezone));
    const rows = (rollups: EventRollupDelta[]) =>
      rollups.map((r) => `${r.bucket.toISOString()} ${r.name} ${r.occurrences} ${r.sessions}`).sort();
    const linkRows = (links: EventLinkDelta[]) =>
      links
        .map((l) => `${l.toBucket.toISOString()} ${l.name} ${l.fromBucket.toISOString()} ${l.sessions}`)
        .sort();
    return {
      rollups: rows(quarters.rollups),
      links: linkRows(quarters.links),
      dayRollups: rows(days.rollups),
      dayLinks: linkRows(days.links),
    };
  };
  const storedTables = async () => {
    const rows = async (table: string) =>
      (
        await env.ds.query<Array<{ bucket: Date; name: string; occurrences: number; sessions: number }>>(
          `SELECT bucket, name, occurrences, sessions FROM ${table} WHERE site_id = ?`,
          [site.id],
        )
      )
        .map((r) => `${new Date(r.bucket).toISOString()} ${r.name} ${r.occurrences} ${r.sessions}`)
        .sort();
    const links = async (table: string) =>
      (
        await env.ds.query<Array<{ to_bucket: Date; name: string; from_bucket: Date; sessions: number }>>(
          `SELECT to_bucket, name, from_bucket, sessions FROM ${table} WHERE site_id = ?`,
          [site.id],
        )
      )
        .map(
          (l) =>
            `${new Date(l.to_bucket).toISOString()} ${l.name} ${new Date(l.from_bucket).toISOString()} ${l.sessions}`,
        )
        .sort();
    return {
      rollups: await rows('event_rollups'),
      links: await links('event_links'),
      dayRollups: await rows('event_day_rollups'),
      dayLinks: await links('event_day_links'),
    };
  };

  it('counts occurrences and distinct sessions of every registered event, registered late too', async () => {
    for (const range of RANGES) expect(counts(await events(range))).toEqual(expected(range));
    const tables = await storedTables();
    expect(tables).toEqual(expectedTables());
    // Sessions with events in several quarter hours: the links are what makes them count once;
    // those across midnight are the links between two days.
    expect(tables.links.length).toBeGreaterThan(10);
    expect(tables.dayLinks.length).toBeGreaterThan(0);
    expect(tables.dayLinks.length).toBeLessThan(tables.links.length);
  });

  it('reads the rollups: a link between two days changed by hand shows in the report', async () => {
    // A range of whole days reads the day rows and the links between two of its days.
    const bump = (n: number) =>
      env.ds.query("UPDATE event_day_links SET sessions = sessions + ? WHERE site_id = ? AND name = 'play'", [
        n,
        site.id,
      ]);
    const before = counts(await events(RANGES[0]));
    await bump(1);
    try {
      const after = counts(await events(RANGES[0]));
      expect(after.find((e) => e.name === 'play')!.sessions).toBeLessThan(
        before.find((e) => e.name === 'play')!.sessions,
      );
    } finally {
      await bump(-1);
    }
  });

  it('counts the hits of sessions queued for aggregation as the raw path does, then aggregates them', async () => {
    expect((await env.importHits(imports[1])).rejections).toEqual([]);
    imported.push(...imports[1]);
    for (const range of RANGES) {
      expect(await events(range)).toEqual(await raw(range));
      // Event hits count by their own ts whether or not their session is derived.
      expect(counts(await events(range))).toEqual(expected(range));
    }
    await env.aggregate();
    expect(await storedTables()).toEqual(expectedTables());
    for (const range of RANGES) expect(counts(await events(range))).toEqual(expected(range));
  });

  it('builds the same rollups from the hits when migrating a database that has them', async () => {
    await env.migrateAgainFrom(/EventRollups1765600000000$/);
    expect(await storedTables()).toEqual(expectedTables());
  });
});
