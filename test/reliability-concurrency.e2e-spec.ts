import { CurrentSite, SiteScoped } from '@app/auth';
import type { Site } from '@app/db';
import { ReportDb, StatsModule } from '@app/stats';
import { Controller, Get, INestApplication, Module, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { ReportConcurrency } from '../apps/api/src/concurrency/report-concurrency';
import { pageview } from './support/hits';
import { describeOnServer, TestEnv } from './support/test-env';

const LOCK = `stats-e2e-hold-${randomBytes(4).toString('hex')}`;

/**
 * Test-only report: `parallel` statements at once, each waiting for the named lock the test
 * holds (GET_LOCK, then RELEASE_LOCK at once), so that they stay running exactly as long as
 * the test wants, without any timing assumption.
 */
@ApiExcludeController()
@Controller('api/v1/sites/:id/test-hold')
@SiteScoped()
class HoldController {
  constructor(private readonly reports: ReportDb) {}

  @Get()
  async hold(@CurrentSite() site: Site, @Query() query: Record<string, string>) {
    const parallel = Number(query.parallel ?? 1);
    const rows = await Promise.all(
      Array.from({ length: parallel }, () =>
        this.reports.select<{ got: number }>('SELECT GET_LOCK(?, 60) AS got, RELEASE_LOCK(?) AS released', [
          LOCK,
          LOCK,
        ]),
      ),
    );
    return { data: { site: site.id, got: rows.map((r) => Number(r[0].got)) }, meta: {} };
  }
}

/** What StagesController's statements served, in order: `${name}1` and `${name}2` per request. */
const served: string[] = [];

/**
 * Test-only report in two stages, as the overview's visitors wait for its session totals: a
 * statement that waits for the test's lock, then, once it has answered, a second one.
 */
@ApiExcludeController()
@Controller('api/v1/sites/:id/test-stages')
@SiteScoped()
class StagesController {
  constructor(private readonly reports: ReportDb) {}

  @Get()
  async stages(@Query('name') name: string) {
    await this.reports.select('SELECT GET_LOCK(?, 60) AS got, RELEASE_LOCK(?) AS released', [LOCK, LOCK]);
    served.push(`${name}1`);
    await this.reports.select('SELECT 1 AS one');
    served.push(`${name}2`);
    return { data: { name }, meta: {} };
  }
}

@Module({ imports: [StatsModule], controllers: [HoldController, StagesController] })
class HoldModule {}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

// Holds report statements with GET_LOCK and stops them with KILL QUERY, which only a server has; the
// caps themselves are the engine-independent ReportSession's, so MariaDB's run covers them.
describeOnServer('Concurrent report requests are capped per key and per site (REPORT_CONCURRENCY_*)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let base: string;
  let holder: QueryRunner;
  let flooder: string;
  let victim: string;
  let teammate: string;
  let floodSite: number;
  let victimSite: number;

  beforeAll(async () => {
    env = await TestEnv.create();
    const attacker = await env.user();
    const other = await env.user();
    floodSite = await env.site({ members: [attacker, other] });
    victimSite = await env.site({ members: [other] });
    flooder = (await env.key(attacker)).key;
    teammate = (await env.key(other)).key;
    victim = (await env.key(other)).key;
    await env.registerEvent(victimSite, 'signup');
    await env.importHits([pageview(victimSite, 's1', new Date().toISOString(), '/')]);
    await env.aggregate();
    app = await env.startApp(
      { DB_POOL_SIZE: '6', REPORT_CONCURRENCY_PER_KEY: '2', REPORT_CONCURRENCY_PER_SITE: '3' },
      { imports: [HoldModule] },
    );
    const server = await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    holder = env.ds.createQueryRunner();
    await holder.connect();
  });

  afterAll(async () => {
    await holder.release();
    await env.close();
  });

  const hold = async () => {
    const [{ got }] = await holder.query('SELECT GET_LOCK(?, 5) AS got', [LOCK]);
    expect(Number(got)).toBe(1);
  };
  const release = () => holder.query('SELECT RELEASE_LOCK(?)', [LOCK]);

  /** Statements of this suite's database waiting for the lock right now (SHOW PROCESSLIST). */
  const waiting = async (): Promise<number> => {
    const rows: Array<{ n: number | string }> = await env.ds.query(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'SET STATEMENT %GET_LOCK(%'",
      [env.location.database],
    );
    return Number(rows[0].n);
  };

  const until = async (condition: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`still not ${what} after 20 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const get = (path: string, key: string): Promise<Answer> =>
    fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${key}` } }).then(async (r) => ({
      status: r.status,
      headers: Object.fromEntries(r.headers.entries()),
      body: await r.text(),
    }));

  it("refuses a flooding key's requests beyond its cap with 429, never lets it hold more connections than its cap, and keeps serving another key", async () => {
    await hold();
    const flood = Array.from({ length: 8 }, () =>
      get(`/api/v1/sites/${floodSite}/test-hold?parallel=3`, flooder),
    );
    // 2 requests admitted, 3 statements each, but only 2 connections for the key: 2 statements wait on the lock.
    await until(async () => (await waiting()) === 2, 'two statements waiting');

    const victimAnswers: number[] = [];
    for (let i = 0; i < 5; i++) {
      victimAnswers.push((await get(`/api/v1/sites/${victimSite}/events`, victim)).status);
      victimAnswers.push((await get(`/api/v1/sites/${victimSite}/analytics/overview`, victim)).status);
      // Never more than the key's cap, whatever the flood does meanwhile.
      expect(await waiting()).toBe(2);
    }
    expect(victimAnswers).toEqual(Array(10).fill(200));

    await release();
    const answers = await Promise.all(flood);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429, 429]);
    for (const a of answers.filter((x) => x.status === 200))
      expect(JSON.parse(a.body).data.got).toEqual([1, 1, 1]);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(a.headers['retry-after']).toBe('1');
      expect(a.headers['ratelimit-limit']).toBeDefined();
      const body = JSON.parse(a.body);
      expect(body).toMatchObject({ type: 'about:blank', title: 'Too Many Requests', status: 429 });
      expect(body.detail).toMatch(
        /This key already has 2 report requests running.*REPORT_CONCURRENCY_PER_KEY=2/,
      );
      expect(body.detail).not.toMatch(/requests in 60 s/);
    }
    // The slots are free again.
    expect((await get(`/api/v1/sites/${floodSite}/test-hold`, flooder)).status).toBe(200);
  });

  it('caps a site across keys, and leaves other sites alone', async () => {
    await hold();
    const a = [1, 2].map(() => get(`/api/v1/sites/${floodSite}/test-hold`, flooder));
    await until(async () => (await waiting()) === 2, 'two statements waiting');
    const b = [1, 2].map(() => get(`/api/v1/sites/${floodSite}/test-hold`, teammate));
    await until(async () => (await waiting()) === 3, 'three statements waiting');
    const other = await get(`/api/v1/sites/${victimSite}/events`, teammate);
    expect(other.status).toBe(200);
    await release();
    const answers = await Promise.all([...a, ...b]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 200, 200, 429]);
    const refused = answers.find((x) => x.status === 429)!;
    expect(JSON.parse(refused.body).detail).toMatch(
      new RegExp(`Site ${floodSite} already has 3 report requests running.*REPORT_CONCURRENCY_PER_SITE=3`),
    );
  });

  it("stops a request's query when its client goes away, and frees its slot", async () => {
    await hold();
    const url = new URL(`${base}/api/v1/sites/${floodSite}/test-hold`);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      headers: { Authorization: `Bearer ${flooder}` },
    });
    req.on('error', () => undefined);
    req.end();
    await until(async () => (await waiting()) === 1, 'the statement waiting');
    req.destroy();
    // The lock is still held: only KILL QUERY ends the statement.
    await until(async () => (await waiting()) === 0, 'the statement stopped');
    await release();
    const [again1, again2] = await Promise.all([
      get(`/api/v1/sites/${floodSite}/test-hold`, flooder),
      get(`/api/v1/sites/${floodSite}/test-hold`, flooder),
    ]);
    expect([again1.status, again2.status]).toEqual([200, 200]);
  });

  it("serves report statements by request: an earlier request's next statement before later requests' first ones", async () => {
    // A pool of 3: one connection for report statements (the pool less two), caps out of the way.
    const staged = await env.startApp(
      { DB_POOL_SIZE: '3', REPORT_CONCURRENCY_PER_KEY: '10', REPORT_CONCURRENCY_PER_SITE: '10' },
      { imports: [HoldModule] },
    );
    try {
      const server = await staged.listen(0, '127.0.0.1');
      const at = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const concurrency = staged.get(ReportConcurrency);
      const stages = (name: string) =>
        fetch(`${at}/api/v1/sites/${victimSite}/test-stages?name=${name}`, {
          headers: { Authorization: `Bearer ${victim}` },
        }).then((r) => r.status);
      served.length = 0;
      await hold();
      const a = stages('A');
      await until(async () => (await waiting()) === 1, "A's first statement waiting for the lock");
      const b = stages('B');
      await until(
        () => Promise.resolve(concurrency.statementPermits.waiting === 1),
        "B's first statement queued",
      );
      const c = stages('C');
      await until(
        () => Promise.resolve(concurrency.statementPermits.waiting === 2),
        "C's first statement queued",
      );
      await release();
      expect(await Promise.all([a, b, c])).toEqual([200, 200, 200]);
      // In the order statements asked, A's second would queue behind B's and C's first ones.
      expect(served).toEqual(['A1', 'A2', 'B1', 'B2', 'C1', 'C2']);
    } finally {
      await staged.close();
      env.app = app; // startApp made the second app the one env.close() closes
    }
  });
});
