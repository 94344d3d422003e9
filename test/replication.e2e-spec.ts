import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../scripts/fault/api-process';
import {
  ReplicationPair,
  rowsRead,
  startReplicationPair,
  waitForReplica,
} from '../scripts/fault/replication';
import { pageview } from './support/hits';
import { SAMPLE_QUERIES } from './support/routes';
import { ApiProcess, startApiProcess } from './support/test-env';

const DATABASE = 'stats_replicas';
const REPORT_TABLES = ['sessions', 'hits', 'orders', 'order_items'];
const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);

/**
 * Every documented site report over the demo's last days. Realtime is left out of the
 * comparisons: it counts the last minutes, which move between two requests.
 */
function reportPaths(site: number): string[] {
  return Object.entries(SAMPLE_QUERIES)
    .filter(([template]) => template.includes('{id}') && !template.endsWith('/realtime'))
    .map(([template, query]) => {
      const dated = query
        .replace(/from=\d{4}-\d{2}-\d{2}/, `from=${day(2)}`)
        .replace(/to=\d{4}-\d{2}-\d{2}/, `to=${day(0)}`);
      return `${template.replace('{id}', String(site))}?${dated}`;
    });
}

interface Answer {
  status: number;
  etag: string | null;
  problem: boolean;
  body: string;
}

describe('Read replicas (API_DATABASE_REPLICA_URLS): a real GTID replica of a private primary', () => {
  let pair: ReplicationPair;
  let api: ApiProcess;
  let primaryOnly: ApiProcess;
  let key: string;
  let site: number;
  let replicaName: string;
  const cli = async (...args: string[]) =>
    JSON.parse(
      await runCli([...args, '--json'], { DATABASE_URL: pair.primary.url(DATABASE), API_DATABASE_URL: '' }),
    ) as Record<string, unknown>;
  /** Every answer with a strong ETag so far, by ETag: one ETag must always name one body. */
  const bodies = new Map<string, string>();

  const get = async (target: ApiProcess, url: string): Promise<Answer> => {
    const res = await fetch(`${target.url}${url}`, { headers: { Authorization: `Bearer ${key}` } });
    const answer = {
      status: res.status,
      etag: res.headers.get('etag'),
      problem: (res.headers.get('content-type') ?? '').startsWith('application/problem+json'),
      body: await res.text(),
    };
    if (answer.status === 200 && answer.etag?.startsWith('"')) {
      if (!bodies.has(answer.etag)) bodies.set(answer.etag, answer.body);
      expect({ url, body: answer.body }).toEqual({ url, body: bodies.get(answer.etag) });
    }
    return answer;
  };

  const replicaState = async () => {
    type Checks = {
      replicas: { servers: Array<{ replica: string; state: string; lag_seconds: number | null }> };
    };
    // 200: Terminus's `details`; 503 (no database answers): the problem body's `checks`.
    const ready = (await (await fetch(`${api.url}/health/ready`)).json()) as {
      details?: Checks;
      checks?: Checks;
    };
    return (ready.details ?? ready.checks)!.replicas.servers[0];
  };
  const waitForState = async (state: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while ((await replicaState()).state !== state) {
      if (Date.now() > deadline)
        throw new Error(`the replica did not become ${state} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const reads = async () => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const count = (server: string) =>
      Number(
        new RegExp(`^db_reads_total\\{server="${server.replace(/\./g, '\\.')}"\\} (\\d+)`, 'm').exec(
          text,
        )?.[1] ?? 0,
      );
    return { primary: count('primary'), replica: count(replicaName) };
  };
  /** The replica's state and lag as /metrics exposes them (db_replica_state, db_replica_lag_seconds). */
  const replicaMetrics = async () => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const label = replicaName.replace(/\./g, '\\.');
    const states = [
      ...text.matchAll(new RegExp(`^db_replica_state\\{replica="${label}",state="(\\w+)"\\} 1$`, 'gm')),
    ];
    const lag = new RegExp(`^db_replica_lag_seconds\\{replica="${label}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    return { states: states.map((m) => m[1]), lag_seconds: lag === undefined ? null : Number(lag) };
  };
  const replicaRowsRead = () => rowsRead(pair.replica, DATABASE, REPORT_TABLES);
  const primaryRowsRead = () => rowsRead(pair.primary, DATABASE, REPORT_TABLES);

  beforeAll(async () => {
    pair = await startReplicationPair();
    replicaName = `127.0.0.1:${pair.replica.port}`;
    await cli('migrate');
    const demo = (await cli('demo', '--days', '3')) as { key: string; sites: Array<{ id: number }> };
    key = demo.key;
    site = demo.sites[0].id;
    await waitForReplica(pair);
    const common = {
      DATABASE_URL: pair.primary.url(DATABASE),
      API_DATABASE_URL: '',
      REDIS_URL: '',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DB_HEALTH_INTERVAL_MS: '200',
    };
    [api, primaryOnly] = await Promise.all([
      startApiProcess({
        ...common,
        API_DATABASE_REPLICA_URLS: pair.replica.url(DATABASE),
        REPLICA_MAX_LAG_SECONDS: '2',
      }),
      startApiProcess(common),
    ]);
  }, 110_000);

  afterAll(async () => {
    await Promise.all([api?.stop('SIGKILL'), primaryOnly?.stop('SIGKILL')]);
    await pair?.destroy();
  });

  it('reads every report from the replica, with the same bodies and ETags as the primary gives', async () => {
    await waitForState('up');
    expect(await replicaState()).toMatchObject({ replica: replicaName, lag_seconds: 0 });
    const paths = reportPaths(site);
    const [replicaBefore, primaryBefore] = [await replicaRowsRead(), await primaryRowsRead()];
    const fromReplica = [];
    for (const url of paths) fromReplica.push(await get(api, url));
    const [replicaAfter, primaryAfter] = [await replicaRowsRead(), await primaryRowsRead()];
    // The replica's own counters: it read the report tables; the primary read none of them.
    expect(replicaAfter).toBeGreaterThan(replicaBefore);
    expect(primaryAfter).toBe(primaryBefore);
    expect(await reads()).toMatchObject({ primary: 0, replica: expect.any(Number) });
    expect((await reads()).replica).toBeGreaterThan(paths.length);

    for (const [i, url] of paths.entries()) {
      const fromPrimary = await get(primaryOnly, url);
      expect({ url, status: fromReplica[i].status }).toEqual({ url, status: 200 });
      expect({ url, body: fromReplica[i].body, etag: fromReplica[i].etag }).toEqual({
        url,
        body: fromPrimary.body,
        etag: fromPrimary.etag,
      });
    }
    // The key guard's write went to the primary, and from there to the replica.
    const lastUsed = async (db: ReplicationPair['primary']) =>
      (await db.sql<{ n: number }>(`SELECT COUNT(last_used_at) AS n FROM ${DATABASE}.api_keys`))[0].n;
    const deadline = Date.now() + 10_000;
    while (Number(await lastUsed(pair.primary)) === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(Number(await lastUsed(pair.primary))).toBe(1);
    await waitForReplica(pair);
    expect(Number(await lastUsed(pair.replica))).toBe(1);
  });

  it('skips a replica more than REPLICA_MAX_LAG_SECONDS behind, answers from the primary, and reads it again once it caught up', async () => {
    const overview = reportPaths(site).find((p) => p.includes('/analytics/overview'))!;
    const before = await get(api, overview);
    await pair.replica.sql('STOP SLAVE');

    const dir = mkdtempSync(path.join(tmpdir(), 'stats-replica-hits-'));
    try {
      const file = path.join(dir, 'hits.ndjson');
      const at = `${day(1)}T12:00:00Z`;
      writeFileSync(
        file,
        ['r1', 'r2', 'r3']
          .map((s, i) => JSON.stringify(pageview(site, `replica-${s}`, at, `/replica/${i}`)))
          .join('\n'),
      );
      await runCli(['import', file, '--aggregate', '--json'], {
        DATABASE_URL: pair.primary.url(DATABASE),
        API_DATABASE_URL: '',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const fresh = await get(primaryOnly, overview);
    expect(fresh.body).not.toBe(before.body);
    expect((await get(api, overview)).status).toBe(200);

    // Until the replica is judged too far behind, an answer is the old one under the old
    // ETag (get() checks that an ETag never names two bodies); then the primary's.
    await waitForState('lagging');
    expect((await replicaState()).lag_seconds).toBeGreaterThan(2);
    const lagging = await replicaMetrics();
    expect(lagging.states).toEqual(['lagging']);
    expect(lagging.lag_seconds).toBeGreaterThan(2);
    const whileLagging = await get(api, overview);
    expect({ body: whileLagging.body, etag: whileLagging.etag }).toEqual({
      body: fresh.body,
      etag: fresh.etag,
    });

    await pair.replica.sql('START SLAVE');
    await waitForState('up');
    const replicaBefore = await replicaRowsRead();
    // Another limit: an answer not cached yet, so the replica computes it.
    const again = await get(api, overview.replace('limit=5', 'limit=6'));
    expect(again.status).toBe(200);
    expect(await replicaRowsRead()).toBeGreaterThan(replicaBefore);
    expect(again.body).toBe((await get(primaryOnly, overview.replace('limit=5', 'limit=6'))).body);
  });

  it('keeps answering from the primary when the replica stops (503 at most during the switch), and reads the replica again when it returns', async () => {
    const paths = ['/api/v1/sites', ...reportPaths(site)];
    const samples: Array<{ startedAt: number; answer: Answer }> = [];
    let running = true;
    const workers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = w; running; i++) {
        const startedAt = Date.now();
        samples.push({ startedAt, answer: await get(api, paths[i % paths.length]) });
      }
    });

    while (samples.length < 10) await new Promise((r) => setTimeout(r, 20));
    await pair.replica.stop('SIGTERM');
    await waitForState('down');
    const detected = Date.now();
    const readsAtDetection = await reads();
    while (samples.filter((s) => s.startedAt > detected).length < 30)
      await new Promise((r) => setTimeout(r, 20));
    running = false;
    await Promise.all(workers);

    const unexpected = samples.filter(
      (s) => !(s.answer.status === 200 || (s.answer.status === 503 && s.answer.problem)),
    );
    expect(unexpected.map((s) => s.answer)).toEqual([]);
    const after = samples.filter((s) => s.startedAt > detected);
    expect(after.map((s) => s.answer.status)).toEqual(after.map(() => 200));
    expect((await reads()).primary).toBeGreaterThan(readsAtDetection.primary);
    const down = await replicaState();
    expect(down).toMatchObject({ state: 'down', lag_seconds: null });
    expect(await replicaMetrics()).toEqual({ states: ['down'], lag_seconds: null });
    const ready = await fetch(`${api.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'degraded',
      details: { database: { status: 'up' }, replicas: { status: 'degraded' } },
    });

    await pair.replica.start();
    await waitForState('up');
    const up = await replicaMetrics();
    expect(up.states).toEqual(['up']);
    expect(up.lag_seconds).toBeLessThanOrEqual(2);
    const replicaReads = (await reads()).replica;
    const replicaBefore = await replicaRowsRead();
    const back = await get(api, reportPaths(site)[0].replace(/limit=\d+/, 'limit=4'));
    expect(back.status).toBe(200);
    expect((await reads()).replica).toBeGreaterThan(replicaReads);
    expect(await replicaRowsRead()).toBeGreaterThan(replicaBefore);
  });
  it('answers from the replica while the primary is down, and 503 only when no database answers', async () => {
    const databaseStatus = async () => {
      // 200: Terminus's `details`; 503: the problem body's `checks`.
      const ready = (await (await fetch(`${api.url}/health/ready`)).json()) as {
        details?: { database?: { status?: string } };
        checks?: { database?: { status?: string } };
      };
      return (ready.details ?? ready.checks)?.database?.status;
    };
    const waitForDatabase = async (status: string) => {
      const deadline = Date.now() + 30_000;
      while ((await databaseStatus()) !== status) {
        if (Date.now() > deadline) throw new Error(`the database did not become ${status} within 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // Answers not cached yet (another limit), so each one is computed by a server; one at a
    // time, within the key's concurrency cap.
    const getAll = async (paths: string[]) => {
      const answers: Answer[] = [];
      for (const p of paths) answers.push(await get(api, p));
      return answers;
    };
    const fresh = (n: number) =>
      reportPaths(site).map((p) => (p.includes('limit=') ? p.replace(/limit=\d+/, `limit=${n}`) : p));

    await waitForState('up');
    await pair.primary.stop('SIGTERM');
    await waitForDatabase('degraded');
    const replicaBefore = await replicaRowsRead();
    const withoutPrimary = await getAll(fresh(7));
    expect(withoutPrimary.map((a) => a.status)).toEqual(withoutPrimary.map(() => 200));
    expect(await replicaRowsRead()).toBeGreaterThan(replicaBefore);

    await pair.replica.stop('SIGTERM');
    await waitForState('down');
    await waitForDatabase('down');
    const nothing = await get(api, fresh(8)[0]);
    expect({ status: nothing.status, problem: nothing.problem }).toEqual({ status: 503, problem: true });
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(503);

    await pair.primary.start();
    await pair.replica.start();
    await waitForState('up');
    await waitForDatabase('up');
    const back = await getAll(fresh(9));
    expect(back.map((a) => a.status)).toEqual(back.map(() => 200));
  });
});
