/**
 * `npm run load`: the built API under autocannon, on a database of its own seeded with the
 * CLI's demo data (90 days of two sites) plus a third site, a second user and six keys.
 *
 * 1. `runs` runs of `duration` s with `connections` connections over a mix of every documented
 *    route (test/support/routes.ts's sample queries, dated over the last 30 days), each request
 *    with a random key and one of that key's sites; RATE_LIMIT_PER_MINUTE is set out of reach,
 *    so any non-2xx is a failure. After each run the API's RSS is read: the three figures and
 *    the last/first ratio show whether memory grows with traffic.
 * 2. A rate-limit phase against a second API process with RATE_LIMIT_PER_MINUTE=100 and one
 *    key: a fixed number of requests (100 + rateLimitPhaseExtra), not a duration, so the
 *    outcome cannot depend on the machine's speed: exactly 100 answer 2xx and the rest 429
 *    (the window opens at the first request and lasts 60 s, far longer than 150 requests).
 * 3. Fairness (issue #12): a third process with the default pool and concurrency caps. A victim
 *    key's `/events` latency is measured idle (sequential requests), then again while another
 *    key floods with 20 concurrent expensive funnels (10 `/*` steps over the longest range,
 *    window_hours=168). The flooder gets 429 beyond REPORT_CONCURRENCY_PER_KEY; the figure is
 *    the victim's median under flood ÷ its idle median (target: ≤ 2). The caps are set out of
 *    reach in phases 1 and 2, which measure throughput and the rate limit.
 *
 * Prints a summary and writes bench/results-load-<time>.json (gitignored).
 * Options: --duration 60 --connections 200 --runs 3 --days 90 --fairness 20 --fairness-cap 4
 * --keep (keep the database).
 * LOAD_DATABASE_URL (else DATABASE_URL, else mysql://root@127.0.0.1:3306) names the server.
 */
import autocannon from 'autocannon';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { ApiProcess, readOnlyApiUrl, runCli, startApiProcess } from './fault/api-process';
import { SAMPLE_QUERIES } from '../test/support/routes';

export interface LoadOptions {
  duration: number;
  connections: number;
  runs: number;
  days: number;
  /** Requests of the rate-limit phase beyond the limit (all must be 429). */
  rateLimitPhaseExtra: number;
  /** Seconds of the fairness flood (0: skip the phase). */
  fairnessSeconds: number;
  /** REPORT_CONCURRENCY_PER_KEY of the fairness phase (default: the API's default). */
  fairnessCap?: number;
  keep: boolean;
  log: (line: string) => void;
}

interface Caller {
  key: string;
  sites: number[];
}

export interface RunFigures {
  requests_per_second: number;
  requests: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_max_ms: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  rss_after_mb: number;
  rss_peak_mb: number;
}

export interface LoadResults {
  started_at: string;
  options: Omit<LoadOptions, 'log'>;
  machine: { cpus: number; node: string };
  data: { hits: number; sessions: number; sites: number; keys: number; routes: string[] };
  runs: RunFigures[];
  rss_mb: number[];
  rss_growth_ratio: number;
  rate_limit_phase: {
    limit: number;
    requests: number;
    elapsed_seconds: number;
    status_codes: Record<string, number>;
    ok: boolean;
  };
  fairness_phase?: FairnessFigures;
  ok: boolean;
}

export interface FairnessFigures {
  seconds: number;
  pool_size: number;
  concurrency_per_key: number;
  victim_route: string;
  flood_route: string;
  flood_connections: number;
  victim_idle: LatencyFigures;
  victim_under_flood: LatencyFigures;
  /** Victim's median under flood ÷ its idle median. */
  p50_ratio: number;
  flooder_status_codes: Record<string, number>;
  /** The victim got only 200s and its median stayed within 2× of idle. */
  ok: boolean;
}

export interface LatencyFigures {
  requests: number;
  statuses: Record<string, number>;
  p50_ms: number;
  p90_ms: number;
  max_ms: number;
}

const DEFAULTS: LoadOptions = {
  duration: 60,
  connections: 200,
  runs: 3,
  days: 90,
  rateLimitPhaseExtra: 50,
  fairnessSeconds: 20,
  keep: false,
  log: (line) => process.stderr.write(`${line}\n`),
};

/** Resident set size of process `pid` in MB (Linux); a clear error when the process has gone. */
export function rssMb(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    throw new Error(`the API process (pid ${pid}) is no longer running: its memory cannot be read`);
  }
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round((kb / 1024) * 10) / 10;
}

function serverUrl(): URL {
  const url = new URL(
    process.env.LOAD_DATABASE_URL || process.env.DATABASE_URL || 'mysql://root@127.0.0.1:3306/x',
  );
  url.pathname = '/';
  return url;
}

/** The sample query of a route, dated over the last 30 days (the demo data's recent past). */
function datedQuery(template: string): string {
  const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
  return (SAMPLE_QUERIES[template] ?? '')
    .replace(/from=\d{4}-\d{2}-\d{2}/, `from=${day(29)}`)
    .replace(/to=\d{4}-\d{2}-\d{2}/, `to=${day(0)}`);
}

async function seed(databaseUrl: string, apiDatabaseUrl: string, days: number) {
  // migrate creates the API's read-only account (API_DATABASE_URL), which the API runs as.
  const env = { DATABASE_URL: databaseUrl, API_DATABASE_URL: apiDatabaseUrl };
  const cli = async (...args: string[]) =>
    JSON.parse(await runCli([...args, '--json'], env)) as Record<string, unknown>;
  await cli('migrate');
  const demo = (await cli('demo', '--days', String(days))) as {
    user_id: number;
    key: string;
    sites: Array<{ id: number }>;
    loaded: { hits: number; sessions: number };
  };
  const [shop, blog] = demo.sites.map((s) => s.id);
  const third = (
    await cli('sites:create', '--name', 'Load', '--domain', 'load.example', '--timezone', 'Asia/Kolkata')
  ).id as number;
  const other = (await cli('users:create', '--email', `load-${Date.now()}@load.example`)).id as number;
  await cli('members:add', '--site', String(third), '--user', String(demo.user_id));
  for (const site of [shop, third]) await cli('members:add', '--site', String(site), '--user', String(other));
  const callers: Caller[] = [{ key: demo.key, sites: [shop, blog, third] }];
  for (let i = 0; i < 3; i++)
    callers.push({
      key: (await cli('keys:create', '--user', String(demo.user_id))).key as string,
      sites: [shop, blog, third],
    });
  for (let i = 0; i < 2; i++)
    callers.push({
      key: (await cli('keys:create', '--user', String(other))).key as string,
      sites: [shop, third],
    });
  return {
    callers,
    hits: demo.loaded.hits,
    sessions: demo.loaded.sessions,
    sites: 3,
    /** A site only the demo user reads, and one of the other user's sites. */
    blog,
    third,
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Sequential requests until `until()` says stop (at least `min`): the latency a lone user sees. */
async function sequentialLatencies(
  url: string,
  key: string,
  min: number,
  until: () => boolean,
): Promise<LatencyFigures> {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  while (times.length < min || !until()) {
    const started = performance.now();
    const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    times.push(performance.now() - started);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    requests: times.length,
    statuses,
    p50_ms: round(quantile(sorted, 0.5)),
    p90_ms: round(quantile(sorted, 0.9)),
    max_ms: round(sorted[sorted.length - 1] ?? 0),
  };
}

/** Phase 3: the victim's latency idle and while another key floods with expensive funnels. */
async function fairnessPhase(
  common: NodeJS.ProcessEnv,
  flooder: Caller,
  floodSite: number,
  victim: Caller,
  victimSite: number,
  seconds: number,
  cap: number | undefined,
  processes: ApiProcess[],
): Promise<FairnessFigures> {
  const api = await startApiProcess(
    {
      ...common,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      // Every funnel is computed: a cached answer would make the flood cheap.
      REPORT_CACHE_MB: '0',
      ...(cap === undefined ? {} : { REPORT_CONCURRENCY_PER_KEY: String(cap) }),
    },
    { discardStdout: true },
  );
  processes.push(api);
  const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
  const steps = encodeURIComponent(
    JSON.stringify(Array.from({ length: 10 }, () => ({ type: 'pageview', path: '/*' }))),
  );
  const floodRoute = `/api/v1/sites/${floodSite}/analytics/funnel?steps=${steps}&window_hours=168&from=${day(730)}&to=${day(0)}`;
  const victimRoute = `/api/v1/sites/${victimSite}/events?from=${day(29)}&to=${day(0)}`;
  const victimUrl = `${api.url}${victimRoute}`;
  await sequentialLatencies(victimUrl, victim.key, 10, () => true);
  const idle = await sequentialLatencies(victimUrl, victim.key, 40, () => true);
  // The review's flood: 20 clients of one key, each sending the expensive funnel again as soon
  // as it has its answer, and after Retry-After when it was refused (as HTTP clients do).
  const connections = 20;
  let flooding = true;
  const floodCodes: Record<string, number> = {};
  const until = Date.now() + seconds * 1000;
  const flood = Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const res = await fetch(`${api.url}${floodRoute}`, {
          headers: { authorization: `Bearer ${flooder.key}` },
        });
        await res.arrayBuffer();
        floodCodes[res.status] = (floodCodes[res.status] ?? 0) + 1;
        const retryAfter = Number(res.headers.get('retry-after') ?? 0);
        if (res.status === 429 || res.status === 503)
          await new Promise((r) => setTimeout(r, Math.max(1, retryAfter) * 1000));
      }
    }),
  ).finally(() => (flooding = false));
  // Let the flood fill its slots before measuring.
  await new Promise((r) => setTimeout(r, 1000));
  const underFlood = await sequentialLatencies(victimUrl, victim.key, 10, () => !flooding);
  await flood;
  const ratio = Math.round((underFlood.p50_ms / Math.max(idle.p50_ms, 0.1)) * 100) / 100;
  return {
    seconds,
    pool_size: 10,
    concurrency_per_key: cap ?? 4,
    victim_route: victimRoute.replace(/\?.*/, ''),
    flood_route: '/api/v1/sites/{id}/analytics/funnel (10 × /*, 731 days, window_hours=168)',
    flood_connections: connections,
    victim_idle: idle,
    victim_under_flood: underFlood,
    p50_ratio: ratio,
    flooder_status_codes: floodCodes,
    ok: ratio <= 2 && Object.keys(underFlood.statuses).every((c) => c === '200'),
  };
}

/** Requests for `duration` seconds, or exactly `{ amount }` requests whatever the time they take. */
export function attack(
  url: string,
  connections: number,
  length: number | { amount: number },
  pick: () => { path: string; key: string },
  onSample?: () => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const timer = onSample ? setInterval(onSample, 1000) : undefined;
    autocannon(
      {
        url,
        connections,
        ...(typeof length === 'number' ? { duration: length } : { amount: length.amount }),
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              const next = pick();
              return { ...request, path: next.path, headers: { authorization: `Bearer ${next.key}` } };
            },
          },
        ],
      },
      (error, result) => {
        clearInterval(timer);
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve(result);
      },
    );
  });
}

export const statusCodes = (result: autocannon.Result): Record<string, number> =>
  Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));

export async function runLoad(overrides: Partial<LoadOptions> = {}): Promise<LoadResults> {
  const options = { ...DEFAULTS, ...overrides };
  const { log } = options;
  const server = serverUrl();
  const database = `stats_load_${Date.now().toString(36)}`;
  const databaseUrl = new URL(database, server).toString();
  const apiUser = `load_api_${Date.now().toString(36)}`;
  const apiDatabaseUrl = readOnlyApiUrl(databaseUrl, apiUser);
  const admin = await createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password),
  });
  const processes: ApiProcess[] = [];
  try {
    log(`seeding ${database} with ${options.days} days of demo traffic…`);
    const data = await seed(databaseUrl, apiDatabaseUrl, options.days);
    const common = {
      DATABASE_URL: databaseUrl,
      API_DATABASE_URL: apiDatabaseUrl,
      REDIS_URL: '',
      LOG_LEVEL: 'info',
    };
    // Phases 1 and 2 measure throughput and the rate limit: the concurrency caps out of reach.
    const uncapped = { REPORT_CONCURRENCY_PER_KEY: '1000', REPORT_CONCURRENCY_PER_SITE: '1000' };
    const api = await startApiProcess(
      { ...common, ...uncapped, RATE_LIMIT_PER_MINUTE: '1000000000' },
      { discardStdout: true },
    );
    processes.push(api);
    const pid = api.child.pid!;

    const document = (await (await fetch(`${api.url}/api/docs-json`)).json()) as {
      paths: Record<string, unknown>;
    };
    const templates = Object.keys(document.paths);
    const queries = new Map(templates.map((t) => [t, datedQuery(t)]));
    const pick = () => {
      const caller = data.callers[Math.floor(Math.random() * data.callers.length)];
      const template = templates[Math.floor(Math.random() * templates.length)];
      const site = caller.sites[Math.floor(Math.random() * caller.sites.length)];
      const query = queries.get(template);
      return { key: caller.key, path: template.replace('{id}', String(site)) + (query ? `?${query}` : '') };
    };

    const warmUp = Math.min(5, Math.floor(options.duration / 2));
    if (warmUp > 0) {
      log(`warming up (${warmUp} s, ${Math.min(options.connections, 20)} connections)…`);
      await attack(api.url, Math.min(options.connections, 20), warmUp, pick);
    }

    const runs: RunFigures[] = [];
    for (let i = 1; i <= options.runs; i++) {
      log(`run ${i}/${options.runs}: ${options.connections} connections for ${options.duration} s…`);
      let peak = rssMb(pid);
      const result = await attack(api.url, options.connections, options.duration, pick, () => {
        peak = Math.max(peak, rssMb(pid));
      });
      await new Promise((r) => setTimeout(r, 1000));
      const figures: RunFigures = {
        requests_per_second: Math.round(result.requests.average),
        requests: result.requests.total,
        latency_p50_ms: result.latency.p50,
        latency_p99_ms: result.latency.p99,
        latency_max_ms: result.latency.max,
        non_2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        status_codes: statusCodes(result),
        rss_after_mb: rssMb(pid),
        rss_peak_mb: Math.max(peak, rssMb(pid)),
      };
      runs.push(figures);
      log(
        `  ${figures.requests_per_second} req/s, p50 ${figures.latency_p50_ms} ms, p99 ${figures.latency_p99_ms} ms, ` +
          `non-2xx ${figures.non_2xx}, errors ${figures.errors}, RSS ${figures.rss_after_mb} MB`,
      );
    }

    const limit = 100;
    const requests = limit + options.rateLimitPhaseExtra;
    log(`rate-limit phase: RATE_LIMIT_PER_MINUTE=${limit}, one key, ${requests} requests…`);
    const limited = await startApiProcess(
      { ...common, ...uncapped, RATE_LIMIT_PER_MINUTE: String(limit) },
      { discardStdout: true },
    );
    processes.push(limited);
    const one = data.callers[0];
    const phaseStart = Date.now();
    const phase = await attack(limited.url, 10, { amount: requests }, () => ({
      key: one.key,
      path: `/api/v1/sites/${one.sites[0]}/analytics/realtime`,
    }));
    const elapsed = Math.round((Date.now() - phaseStart) / 100) / 10;
    const phaseCodes = statusCodes(phase);
    const phaseOk =
      phaseCodes['200'] === limit &&
      phaseCodes['429'] === options.rateLimitPhaseExtra &&
      Object.keys(phaseCodes).every((c) => c === '200' || c === '429');

    let fairness: FairnessFigures | undefined;
    if (options.fairnessSeconds > 0) {
      log(`fairness phase: one key floods with expensive funnels for ${options.fairnessSeconds} s…`);
      const victim = data.callers[data.callers.length - 1];
      fairness = await fairnessPhase(
        common,
        data.callers[0],
        data.blog,
        victim,
        data.third,
        options.fairnessSeconds,
        options.fairnessCap,
        processes,
      );
    }

    const rss = runs.map((r) => r.rss_after_mb);
    const results: LoadResults = {
      started_at: new Date().toISOString(),
      options: { ...options, log: undefined } as unknown as Omit<LoadOptions, 'log'>,
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      data: {
        hits: data.hits,
        sessions: data.sessions,
        sites: data.sites,
        keys: data.callers.length,
        routes: templates,
      },
      runs,
      rss_mb: rss,
      rss_growth_ratio: Math.round((rss[rss.length - 1] / rss[0]) * 100) / 100,
      rate_limit_phase: {
        limit,
        requests,
        elapsed_seconds: elapsed,
        status_codes: phaseCodes,
        ok: phaseOk,
      },
      fairness_phase: fairness,
      // The fairness ratio is a speed figure: printed and written, not part of `ok`.
      ok: phaseOk && runs.every((r) => r.non_2xx === 0 && r.errors === 0),
    };
    return results;
  } finally {
    for (const p of processes) await p.stop('SIGTERM');
    if (!options.keep) {
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.query('DROP USER IF EXISTS ?@?', [apiUser, '%']);
    }
    await admin.end();
  }
}

function parseArgs(argv: string[]): Partial<LoadOptions> {
  const options: Partial<LoadOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--keep') options.keep = true;
    else if (flag === '--fairness' || flag === '--fairness-cap') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a whole number`);
      if (flag === '--fairness') options.fairnessSeconds = n;
      else options.fairnessCap = n;
      i++;
    } else if (['--duration', '--connections', '--runs', '--days'].includes(flag)) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer`);
      options[flag.slice(2) as 'duration' | 'connections' | 'runs' | 'days'] = n;
      i++;
    } else throw new Error(`unknown option ${flag}`);
  }
  return options;
}

function fairnessLine(f: FairnessFigures | undefined): string {
  if (!f) return '';
  const l = (x: LatencyFigures) =>
    `p50 ${x.p50_ms} ms, p90 ${x.p90_ms} ms, max ${x.max_ms} ms (${x.requests} requests, ${JSON.stringify(x.statuses)})`;
  return (
    `fairness (pool ${f.pool_size}, ${f.concurrency_per_key} per key; ${f.flood_connections} connections flooding ${f.seconds} s):\n` +
    `  victim ${f.victim_route} idle: ${l(f.victim_idle)}\n` +
    `  victim under flood: ${l(f.victim_under_flood)}\n` +
    `  median ratio ${f.p50_ratio} (target ≤ 2) ${f.ok ? 'ok' : 'NOT OK'}; flooder got ${JSON.stringify(f.flooder_status_codes)}\n`
  );
}

async function main(): Promise<void> {
  const results = await runLoad(parseArgs(process.argv.slice(2)));
  const dir = path.join(__dirname, '../bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `results-load-${results.started_at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const table = results.runs
    .map(
      (r, i) =>
        `run ${i + 1}: ${r.requests_per_second} req/s (${r.requests} requests), p50 ${r.latency_p50_ms} ms, ` +
        `p99 ${r.latency_p99_ms} ms, non-2xx ${r.non_2xx}, errors ${r.errors}, RSS ${r.rss_after_mb} MB (peak ${r.rss_peak_mb})`,
    )
    .join('\n');
  process.stdout.write(
    `${table}\nRSS after each run: ${results.rss_mb.join(' MB, ')} MB; last/first ${results.rss_growth_ratio}\n` +
      `rate-limit phase (limit ${results.rate_limit_phase.limit}): ${JSON.stringify(results.rate_limit_phase.status_codes)} ` +
      `${results.rate_limit_phase.ok ? 'ok' : 'NOT OK'}\n${fairnessLine(results.fairness_phase)}` +
      `results: ${path.relative(process.cwd(), file)}\n`,
  );
  process.exitCode = results.ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
