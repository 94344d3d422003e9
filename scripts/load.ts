/**
 * `npm run load`: the built API under autocannon, on a database of its own seeded with the
 * CLI's demo data (90 days of two sites) plus a third site, a second user and six keys.
 *
 * 1. `runs` runs of `duration` s with `connections` connections over a mix of every documented
 *    route (test/support/routes.ts's sample queries, dated over the last 30 days), each request
 *    with a random key and one of that key's sites; RATE_LIMIT_PER_MINUTE is set out of reach,
 *    so any non-2xx is a failure. After each run the API's RSS is read: the three figures and
 *    the last/first ratio show whether memory grows with traffic.
 * 2. A short phase against a second API process with RATE_LIMIT_PER_MINUTE=100 and one key:
 *    exactly 100 answers 2xx and the rest 429.
 *
 * Prints a summary and writes bench/results-load-<time>.json (gitignored).
 * Options: --duration 60 --connections 200 --runs 3 --days 90 --keep (keep the database).
 * LOAD_DATABASE_URL (else DATABASE_URL, else mysql://root@127.0.0.1:3306) names the server.
 */
import autocannon from 'autocannon';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { ApiProcess, runCli, startApiProcess } from './fault/api-process';
import { SAMPLE_QUERIES } from '../test/support/routes';

export interface LoadOptions {
  duration: number;
  connections: number;
  runs: number;
  days: number;
  rateLimitPhaseSeconds: number;
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
  rate_limit_phase: { limit: number; seconds: number; status_codes: Record<string, number>; ok: boolean };
  ok: boolean;
}

const DEFAULTS: LoadOptions = {
  duration: 60,
  connections: 200,
  runs: 3,
  days: 90,
  rateLimitPhaseSeconds: 5,
  keep: false,
  log: (line) => process.stderr.write(`${line}\n`),
};

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
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

async function seed(databaseUrl: string, days: number) {
  const env = { DATABASE_URL: databaseUrl, API_DATABASE_URL: '' };
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
  return { callers, hits: demo.loaded.hits, sessions: demo.loaded.sessions, sites: 3 };
}

function attack(
  url: string,
  connections: number,
  duration: number,
  pick: () => { path: string; key: string },
  onSample?: () => void,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const timer = onSample ? setInterval(onSample, 1000) : undefined;
    autocannon(
      {
        url,
        connections,
        duration,
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

const statusCodes = (result: autocannon.Result): Record<string, number> =>
  Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));

export async function runLoad(overrides: Partial<LoadOptions> = {}): Promise<LoadResults> {
  const options = { ...DEFAULTS, ...overrides };
  const { log } = options;
  const server = serverUrl();
  const database = `stats_load_${Date.now().toString(36)}`;
  const databaseUrl = new URL(database, server).toString();
  const admin = await createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password),
  });
  const processes: ApiProcess[] = [];
  try {
    log(`seeding ${database} with ${options.days} days of demo traffic…`);
    const data = await seed(databaseUrl, options.days);
    const common = { DATABASE_URL: databaseUrl, API_DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'info' };
    const api = await startApiProcess(
      { ...common, RATE_LIMIT_PER_MINUTE: '1000000000' },
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
    log(`rate-limit phase: RATE_LIMIT_PER_MINUTE=${limit}, one key, ${options.rateLimitPhaseSeconds} s…`);
    const limited = await startApiProcess(
      { ...common, RATE_LIMIT_PER_MINUTE: String(limit) },
      { discardStdout: true },
    );
    processes.push(limited);
    const one = data.callers[0];
    const phase = await attack(limited.url, 20, options.rateLimitPhaseSeconds, () => ({
      key: one.key,
      path: `/api/v1/sites/${one.sites[0]}/analytics/realtime`,
    }));
    const phaseCodes = statusCodes(phase);
    const phaseOk =
      phaseCodes['200'] === limit &&
      (phaseCodes['429'] ?? 0) > 0 &&
      Object.keys(phaseCodes).every((c) => c === '200' || c === '429');

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
        seconds: options.rateLimitPhaseSeconds,
        status_codes: phaseCodes,
        ok: phaseOk,
      },
      ok: phaseOk && runs.every((r) => r.non_2xx === 0 && r.errors === 0),
    };
    return results;
  } finally {
    for (const p of processes) await p.stop('SIGTERM');
    if (!options.keep) await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}

function parseArgs(argv: string[]): Partial<LoadOptions> {
  const options: Partial<LoadOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--keep') options.keep = true;
    else if (['--duration', '--connections', '--runs', '--days'].includes(flag)) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer`);
      options[flag.slice(2) as 'duration' | 'connections' | 'runs' | 'days'] = n;
      i++;
    } else throw new Error(`unknown option ${flag}`);
  }
  return options;
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
      `${results.rate_limit_phase.ok ? 'ok' : 'NOT OK'}\nresults: ${path.relative(process.cwd(), file)}\n`,
  );
  process.exitCode = results.ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  });
}
