/**
 * Database fault scenarios against the real built API and a private MariaDB: boot without a
 * database, a restart and a crash under traffic, a frozen server. Each returns what it
 * measured; `npm run fault` prints the figures and test/reliability-database.e2e-spec.ts
 * asserts on them at a small size.
 */
import { generateApiKey } from '@app/auth/api-key';
import { createConnection } from 'mysql2/promise';
import { ApiProcess, runCli, startApiProcess } from './api-process';
import { PrivateMariaDb } from './mariadb';

export interface FaultBed {
  db: PrivateMariaDb;
  databaseUrl: string;
  key: string;
  siteId: number;
  /** The API routes the traffic alternates: one lookup, one report through ReportDb. */
  paths: string[];
}

export interface Sample {
  startedAt: number;
  ms: number;
  /** 0: no response (a hang past the client's patience, or a connection error). */
  status: number;
  problemJson: boolean;
}

/** A private MariaDB with a migrated database, a user, a site and a key. */
export async function prepareFaultBed(): Promise<FaultBed> {
  const db = await PrivateMariaDb.create();
  await db.start();
  const databaseUrl = db.url('stats_fault');
  await runCli(['migrate', '--json'], { DATABASE_URL: databaseUrl, API_DATABASE_URL: '' });
  const conn = await createConnection({
    host: '127.0.0.1',
    port: db.port,
    user: 'root',
    database: 'stats_fault',
  });
  try {
    const now = new Date();
    const [user] = (await conn.query('INSERT INTO users (email, created_at) VALUES (?, ?)', [
      'fault@test.example',
      now,
    ])) as unknown as [{ insertId: number }];
    const [site] = (await conn.query(
      "INSERT INTO sites (name, domain, timezone, currency, tracking_mode, created_at) VALUES ('Fault', 'fault.example', 'UTC', 'USD', 'full', ?)",
      [now],
    )) as unknown as [{ insertId: number }];
    await conn.query('INSERT INTO memberships (site_id, user_id, created_at) VALUES (?, ?, ?)', [
      site.insertId,
      user.insertId,
      now,
    ]);
    const k = generateApiKey();
    await conn.query(
      "INSERT INTO api_keys (user_id, name, prefix, key_hash, created_at) VALUES (?, 'fault', ?, ?, ?)",
      [user.insertId, k.prefix, k.hash, now],
    );
    return {
      db,
      databaseUrl,
      key: k.key,
      siteId: site.insertId,
      paths: ['/api/v1/sites', `/api/v1/sites/${site.insertId}/analytics/overview`],
    };
  } finally {
    await conn.end();
  }
}

/** The API on the fault bed's database; statements time out client-side after 3 s here. */
export function startFaultApi(bed: FaultBed, env: NodeJS.ProcessEnv = {}): Promise<ApiProcess> {
  return startApiProcess({
    DATABASE_URL: bed.databaseUrl,
    API_DATABASE_URL: '',
    QUERY_TIMEOUT_MS: '2000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    // A private, throwaway server whose only user is root (see mariadb.ts).
    ALLOW_PRIVILEGED_DB_USER: 'true',
    // 8 clients share one key: the concurrency caps are not what these scenarios measure.
    REPORT_CONCURRENCY_PER_KEY: '1000',
    REPORT_CONCURRENCY_PER_SITE: '1000',
    REDIS_URL: '',
    ...env,
  });
}

async function send(api: ApiProcess, path: string, key: string, patienceMs: number): Promise<Sample> {
  const startedAt = Date.now();
  try {
    const res = await fetch(`${api.url}${path}`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(patienceMs),
    });
    await res.arrayBuffer();
    return {
      startedAt,
      ms: Date.now() - startedAt,
      status: res.status,
      problemJson: (res.headers.get('content-type') ?? '').startsWith('application/problem+json'),
    };
  } catch {
    return { startedAt, ms: Date.now() - startedAt, status: 0, problemJson: false };
  }
}

/** `concurrency` clients sending back to back until stop() is called. */
export function traffic(api: ApiProcess, bed: FaultBed, concurrency: number, patienceMs = 15_000) {
  const samples: Sample[] = [];
  let running = true;
  const workers = Array.from({ length: concurrency }, async (_, w) => {
    for (let i = w; running; i++) {
      samples.push(await send(api, bed.paths[i % bed.paths.length], bed.key, patienceMs));
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    samples,
    stop: async () => {
      running = false;
      await Promise.all(workers);
      return samples;
    },
  };
}

/** Waits until a request answers 200; returns when (ms since epoch). */
async function firstSuccess(api: ApiProcess, bed: FaultBed, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const s = await send(api, bed.paths[1], bed.key, 5000);
    if (s.status === 200) return s.startedAt + s.ms;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no 200 within ${timeoutMs} ms`);
}

const statusCounts = (samples: Sample[]) =>
  samples.reduce<Record<string, number>>((acc, s) => ((acc[s.status] = (acc[s.status] ?? 0) + 1), acc), {});

export interface BootWithoutDatabase {
  ready_status_while_down: number;
  live_status_while_down: number;
  api_statuses_while_down: Record<string, number>;
  api_max_ms_while_down: number;
  all_problem_json: boolean;
  /** From the database accepting connections to the first 200. */
  recovery_ms: number;
  ready_status_after: number;
}

/** The database is down when the API starts: it must boot, answer 503, and recover by itself. */
export async function bootWithoutDatabase(
  bed: FaultBed,
): Promise<{ api: ApiProcess; result: BootWithoutDatabase }> {
  await bed.db.stop();
  const api = await startFaultApi(bed);
  const live = await fetch(`${api.url}/health/live`);
  const ready = await fetch(`${api.url}/health/ready`);
  const samples: Sample[] = [];
  for (let i = 0; i < 10; i++) samples.push(await send(api, bed.paths[i % 2], bed.key, 5000));
  const upAt = await bed.db.start();
  const recoveredAt = await firstSuccess(api, bed, 30_000);
  const readyAfter = await fetch(`${api.url}/health/ready`);
  return {
    api,
    result: {
      ready_status_while_down: ready.status,
      live_status_while_down: live.status,
      api_statuses_while_down: statusCounts(samples),
      api_max_ms_while_down: Math.max(...samples.map((s) => s.ms)),
      all_problem_json: samples.every((s) => s.problemJson),
      recovery_ms: recoveredAt - upAt,
      ready_status_after: readyAfter.status,
    },
  };
}

export interface OutageUnderTraffic {
  requests: number;
  statuses: Record<string, number>;
  /** Requests sent while the database was down: their statuses and slowest answer. */
  outage_requests: number;
  outage_statuses: Record<string, number>;
  outage_max_ms: number;
  /** Requests in flight when the fault struck: slowest answer. */
  in_flight_max_ms: number;
  /** Any answer that was neither 200 nor a problem+json 503. */
  unexpected: Sample[];
  /** From the database answering again to the first 200. */
  recovery_ms: number;
}

/**
 * Traffic, then the fault, `outageMs` without a database, then the database back.
 * `fault`: stop (clean shutdown), crash (SIGKILL), or freeze (SIGSTOP: sockets stay open,
 * nothing answers). `settleMs`: how long after the fault requests may still be in flight or
 * not yet detected; later requests must be answered 503 within a second.
 */
export async function outageUnderTraffic(
  api: ApiProcess,
  bed: FaultBed,
  fault: 'stop' | 'crash' | 'freeze',
  options: { concurrency?: number; outageMs?: number; settleMs?: number } = {},
): Promise<OutageUnderTraffic> {
  const { concurrency = 4, outageMs = 3000, settleMs = fault === 'freeze' ? 2000 : 0 } = options;
  await firstSuccess(api, bed, 30_000);
  const load = traffic(api, bed, concurrency);
  await new Promise((r) => setTimeout(r, 1000));
  const faultAt = Date.now();
  if (fault === 'freeze') bed.db.freeze();
  else await bed.db.stop(fault === 'crash' ? 'SIGKILL' : 'SIGTERM');
  // A stopping server still answers until its process is gone: a request that started in that
  // moment and was answered (a cached report needs only the key and data-version lookups) is
  // in flight, not part of the outage. Requests from here on meet a server that is down.
  const downAt = fault === 'freeze' ? faultAt : Date.now();
  await new Promise((r) => setTimeout(r, outageMs));
  // The server can answer again from the moment it is restarted, before start() sees it answer.
  const restartAt = Date.now();
  let backAt: number;
  if (fault === 'freeze') {
    bed.db.thaw();
    backAt = Date.now();
  } else {
    backAt = await bed.db.start();
  }
  const recoveredAt = await firstSuccess(api, bed, 30_000);
  await new Promise((r) => setTimeout(r, 300));
  const samples = await load.stop();

  const outage = samples.filter((s) => s.startedAt >= downAt + settleMs && s.startedAt < restartAt);
  const inFlight = samples.filter((s) => s.startedAt < downAt && s.startedAt + s.ms > faultAt);
  return {
    requests: samples.length,
    statuses: statusCounts(samples),
    outage_requests: outage.length,
    outage_statuses: statusCounts(outage),
    outage_max_ms: Math.max(0, ...outage.map((s) => s.ms)),
    in_flight_max_ms: Math.max(0, ...inFlight.map((s) => s.ms)),
    unexpected: samples.filter((s) => !(s.status === 200 || (s.status === 503 && s.problemJson))),
    recovery_ms: recoveredAt - backAt,
  };
}
