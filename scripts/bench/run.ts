/**
 * `npm run bench`: the whole benchmark of issue #10 in one run (see BENCHMARKS.md).
 *
 * 1. Generates the synthetic dataset (dataset.ts) for the chosen scale and seed.
 * 2. Creates a database of its own, the sites, goals and registered events, imports the
 *    dataset through the built CLI (`import`) into empty tables and runs `aggregate` (full
 *    backfill), then imports the last hour and aggregates it ("one more hour").
 * 3. Starts the built API with the report cache off and times every endpoint, one request at
 *    a time, over varied parameters (p50/p95/p99).
 * 4. Right after each report's requests, computes its first requests again in-process on the
 *    raw tables (`tables: 'raw'`, no time budget): the speed-up ratio, and the parity of the
 *    bodies.
 * 5. Drives every route with autocannon, with its unfiltered requests (throughput, API RSS), then
 *    a second API process with the cache on: repeated identical overview requests against
 *    /health/live.
 * 6. Imports the last day again as new hits into the loaded tables, and aggregates it.
 *
 * Writes everything to bench/results-bench-<time>.json (gitignored) and returns it.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SingleBar } from 'cli-progress';
import type { SiteContext } from '@app/stats';
import { ApiProcess, CLI_ENTRY, ensureCliBuilt, startApiProcess, waitForBuild } from '../fault/api-process';
import { attack, rssMb, statusCodes } from '../load';
import { AppConfig, loadConfig } from '@app/config';
import { DatabaseConnector } from '@app/db';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import type { AdminService as AdminServiceType } from '../../apps/cli/src/admin.service';
import {
  BIG_SITE_EVENTS,
  BIG_SITE_GOALS,
  DatasetSummary,
  LIVE_MINUTES,
  SiteProfile,
  siteProfiles,
  writeDataset,
  writeLiveSlice,
  writeQueuedSlice,
} from './dataset';
import { Endpoint, endpoints, pathOf, siteToday } from './endpoints';
import type { RawReports } from './raw-context';
import { firstDifference } from './parity';
import { BenchStore, EngineDescription, serverStore, sqliteStore } from './store';

export const ENGINES = ['mariadb', 'sqlite'] as const;

export interface BenchOptions {
  engine: string;
  scale: number;
  seed: number;
  smallSites: number;
  /** Timed requests per endpoint (after one warm-up request). */
  requests: number;
  /** In-process raw computations per report. */
  rawRuns: number;
  connections: number;
  /** Seconds of autocannon per route, and per phase of the cache comparison. */
  duration: number;
  /** The latency phase of one endpoint stops after this many seconds (with at least rawRuns requests). */
  endpointSeconds: number;
  timezone: string;
  now?: Date;
  /** MySQL URL of the server the benchmark creates its database on. */
  server: string;
  dataDir?: string;
  keep: boolean;
  /**
   * A database (or SQLite file) an earlier run kept (`--keep`): no dataset, no import. The run
   * migrates it, aggregates (what a new migration queued), and times the reports on its data.
   */
  reuse?: string;
  /**
   * Only the endpoints whose names start with one of these (e.g. `overview`, `breakdown
   * pageviews`) in the latency, raw and throughput phases; every endpoint when absent.
   */
  only?: string[];
  /** Progress bars and the CLI's own bars on stderr (a terminal only). */
  progress: boolean;
  log: (line: string) => void;
}

export const DEFAULT_OPTIONS: BenchOptions = {
  engine: 'mariadb',
  scale: 1,
  seed: 42,
  smallSites: 1000,
  requests: 50,
  rawRuns: 3,
  connections: 50,
  duration: 30,
  endpointSeconds: 300,
  timezone: 'America/New_York',
  server: process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'mysql://root@127.0.0.1:3306',
  keep: false,
  progress: Boolean(process.stderr.isTTY),
  log: (line) => process.stderr.write(`${line}\n`),
};

/** A CLI command's `--json` result, plus its wall time (process start and boot included). */
export interface CliFigures {
  [field: string]: number | string | boolean | null;
  wall_seconds: number;
}

export interface ImportFigures extends CliFigures {
  hits_per_second: number;
}

export interface LatencyFigures {
  requests: number;
  errors: number;
  status_codes: Record<string, number>;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
  /** p50 of the requests answered 200; undefined when none was. */
  answered_p50_ms?: number;
  /** True when the phase stopped at endpointSeconds before `requests` were timed. */
  capped: boolean;
}

export interface ThroughputFigures {
  route: string;
  connections: number;
  seconds: number;
  requests_per_second: number;
  requests: number;
  p50_ms: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  rss_peak_mb: number;
}

export interface EndpointResult {
  name: string;
  route: string;
  target: Endpoint['target'];
  latency: LatencyFigures;
  raw?: { runs: number; times_ms: number[]; median_ms: number };
  /** Raw median ÷ HTTP p50 of the requests answered 200. */
  speedup?: number;
  parity?: { compared: number; agreed: number; differences: string[]; not_compared: string[] };
  /** Realtime: what its first timed request saw of the live site's window. */
  window?: { active_visitors: number; pageviews_last_30_minutes: number };
}

export interface BenchResults {
  started_at: string;
  finished_at: string;
  options: Omit<BenchOptions, 'log' | 'server' | 'progress' | 'now'> & { now: string };
  machine: {
    cpus: number;
    cpu_model: string;
    memory_gb: number;
    node: string;
    load_average_start: number[];
    load_average_end: number[];
  };
  /** The engine, its version and the settings the figures were taken with. */
  engine: EngineDescription;
  /** The database's name, or the SQLite file. */
  database: string;
  /** null when the run reused a kept database (`--reuse`). */
  dataset: DatasetSummary | null;
  site: { id: number; timezone: string; today: string };
  rows: Record<string, number>;
  /** A run on a kept database has only `aggregate_after_migrate`; a full run every other. */
  ingest: {
    import_empty?: ImportFigures;
    aggregate_backfill?: CliFigures;
    import_hour?: ImportFigures;
    aggregate_hour?: CliFigures;
    import_populated?: ImportFigures;
    aggregate_day?: CliFigures;
    aggregate_after_migrate?: CliFigures;
    /** The live slices imported for realtime (writeLiveSlice), in order. */
    live_slices?: ImportFigures[];
    /** The queued slice imported before the rows timed queued (writeQueuedSlice), and the `aggregate` after them. */
    queued_slice?: ImportFigures;
    aggregate_queued?: CliFigures;
  };
  endpoints: EndpointResult[];
  throughput: ThroughputFigures[];
  cache: {
    path: string;
    overview_hit: ThroughputFigures;
    health_live: ThroughputFigures;
    ratio: number;
  };
  api_rss_mb: { peak: number; after_throughput: number };
  /** Wall seconds of each phase of the run. */
  phases: Record<string, number>;
  parity_ok: boolean;
  file?: string;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentile of already sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Runs the built CLI with `--json`; its progress bars reach the terminal when `progress`. */
async function cli(args: string[], env: NodeJS.ProcessEnv, progress: boolean): Promise<CliFigures> {
  ensureCliBuilt();
  await waitForBuild(CLI_ENTRY);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [CLI_ENTRY, ...args, '--json'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', progress ? 'inherit' : 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`cli ${args.join(' ')} exited ${code}: ${stderr}${stdout}`));
      try {
        const json = JSON.parse(stdout) as Record<string, number | string | boolean | null>;
        resolve({ ...json, wall_seconds: round((Date.now() - started) / 1000, 2) });
      } catch {
        reject(new Error(`cli ${args.join(' ')} printed no JSON: ${stdout}`));
      }
    });
  });
}

const importFigures = (figures: CliFigures): ImportFigures => ({
  ...figures,
  hits_per_second: Math.round(Number(figures.lines) / Number(figures.seconds)),
});

/**
 * Runs `work` with the operator's AdminService and the DataSource of the CLI's modules on the
 * store's database, in-process (what sites:create, keys:create… run, without 1,000 CLI boots).
 */
async function withOperator<T>(
  store: BenchStore,
  work: (admin: AdminServiceType, ds: DataSource) => Promise<T>,
): Promise<T> {
  const { CliModule, CliProgram } = await import('../../apps/cli/src/cli.module');
  const { AdminService } = await import('../../apps/cli/src/admin.service');
  const moduleRef = await Test.createTestingModule({ imports: [CliModule] })
    // The commander program belongs to a command-line run; only AdminService is used here.
    .overrideProvider(CliProgram)
    .useValue({})
    .overrideProvider(AppConfig)
    .useValue(loadConfig({ ...process.env, ...store.env, API_DATABASE_URL: '', LOG_LEVEL: 'silent' }))
    .setLogger(new ConsoleLogger({ logLevels: ['error', 'fatal'] }))
    .compile();
  const db = moduleRef.get(DatabaseConnector);
  await db.connect();
  try {
    return await work(moduleRef.get(AdminService), moduleRef.get(DataSource));
  } finally {
    await db.close();
    await moduleRef.close();
  }
}

/**
 * A site realtime is timed on (writeLiveSlice): the big site's zone, currency and tracking, the
 * key's user a member. Each live slice gets a site of its own, so that two slices (or two runs
 * on a kept database) never share a window.
 */
function createLiveSite(store: BenchStore, userId: number, like: SiteContext, n: number): Promise<number> {
  return withOperator(store, async (admin) => {
    const live = await admin.createSite({
      name: `Bench live ${n}`,
      domain: `live${n}.bench.example`,
      timezone: like.timezone,
      currency: like.currency,
      tracking: like.trackingMode,
    });
    await admin.addMember(live.id, userId);
    return live.id;
  });
}

/** Creates the user, its key, and the sites with their goals and events; returns the key and the user. */
function createSites(
  store: BenchStore,
  label: string,
  profiles: SiteProfile[],
): Promise<{ key: string; userId: number }> {
  return withOperator(store, async (admin) => {
    const user = await admin.createUser(`bench@${label}.example`);
    for (const profile of profiles) {
      const site = await admin.createSite({
        name: profile.big ? 'Bench' : `Small ${profile.index}`,
        domain: profile.big ? 'bench.example' : `s${profile.index}.example`,
        timezone: profile.timezone,
        currency: profile.currency,
        tracking: profile.tracking,
      });
      profile.id = site.id;
      // The big site and a few small ones: the key's site list has more than one entry.
      if (profile.index <= 5) await admin.addMember(site.id, user.id);
    }
    const big = profiles[0];
    for (const name of BIG_SITE_EVENTS) await admin.registerEvent(big.id, name);
    for (const goal of BIG_SITE_GOALS)
      await admin.createGoal(big.id, goal.name, goal.event ? { event: goal.event } : { path: goal.path });
    return { key: (await admin.createKey(user.id, 'bench')).secret, userId: user.id };
  });
}

/**
 * A kept database's big site ('Bench', made by createSites), its user and a new key of that
 * user: what a `--reuse` run reads with.
 */
function existingSite(
  store: BenchStore,
  label: string,
): Promise<{ key: string; site: SiteContext; userId: number }> {
  return withOperator(store, async (admin, ds) => {
    const [site] = await ds.query<
      Array<{
        id: number;
        timezone: string;
        currency: string;
        tracking_mode: 'full' | 'cookieless';
        user_id: number;
      }>
    >(
      "SELECT s.id, s.timezone, s.currency, s.tracking_mode, m.user_id FROM sites s JOIN memberships m ON m.site_id = s.id WHERE s.name = 'Bench' ORDER BY s.id LIMIT 1",
    );
    if (!site)
      throw new Error(`--reuse ${store.name}: no site named Bench (not a database kept by npm run bench)`);
    const key = (await admin.createKey(Number(site.user_id), `bench ${label}`)).secret;
    return {
      key,
      userId: Number(site.user_id),
      site: {
        id: Number(site.id),
        timezone: site.timezone,
        currency: site.currency,
        trackingMode: site.tracking_mode,
      },
    };
  });
}

/** Waits until the API's pool is idle (requests left over from autocannon have finished). */
async function settle(api: ApiProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const busy = /db_pool_connections\{state="(in_use|waiting)"\} (\d+)/g;
    let total = 0;
    for (const m of text.matchAll(busy)) total += Number(m[2]);
    if (total === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function timedGet(url: string, key: string): Promise<{ status: number; ms: number; body: string }> {
  const started = process.hrtime.bigint();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.text();
  return { status: res.status, ms: Number(process.hrtime.bigint() - started) / 1e6, body };
}

function latencyFigures(times: number[], statuses: number[], capped: boolean): LatencyFigures {
  const sorted = [...times].sort((a, b) => a - b);
  const answered = times.filter((_, i) => statuses[i] === 200).sort((a, b) => a - b);
  const codes: Record<string, number> = {};
  for (const s of statuses) codes[s] = (codes[s] ?? 0) + 1;
  return {
    requests: times.length,
    errors: statuses.filter((s) => s !== 200).length,
    status_codes: codes,
    p50_ms: round(percentile(sorted, 50)),
    p95_ms: round(percentile(sorted, 95)),
    p99_ms: round(percentile(sorted, 99)),
    mean_ms: round(times.reduce((a, b) => a + b, 0) / Math.max(1, times.length)),
    max_ms: round(sorted[sorted.length - 1] ?? NaN),
    answered_p50_ms: answered.length ? round(percentile(answered, 50)) : undefined,
    capped,
  };
}

async function throughputRun(
  api: ApiProcess,
  route: string,
  connections: number,
  seconds: number,
  pick: () => { path: string; key: string },
): Promise<ThroughputFigures> {
  const pid = api.child.pid!;
  let peak = rssMb(pid);
  const result = await attack(api.url, connections, seconds, pick, () => {
    peak = Math.max(peak, rssMb(pid));
  });
  return {
    route,
    connections,
    seconds,
    // Completed requests over the run's length: autocannon's per-second average reads 0 for a
    // short run of slow requests.
    requests_per_second: round(result.requests.total / Math.max(result.duration, 0.001)),
    requests: result.requests.total,
    p50_ms: result.requests.total > 0 ? result.latency.p50 : NaN,
    p99_ms: result.requests.total > 0 ? result.latency.p99 : NaN,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: statusCodes(result),
    rss_peak_mb: Math.max(peak, rssMb(pid)),
  };
}

class Progress {
  private bar?: SingleBar;

  constructor(private readonly enabled: boolean) {}

  start(format: string, total: number): void {
    if (!this.enabled) return;
    this.bar = new SingleBar({ format, stream: process.stderr, hideCursor: true, fps: 5, etaBuffer: 50 });
    this.bar.start(total, 0);
  }

  increment(n = 1): void {
    this.bar?.increment(n);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}

export async function runBench(overrides: Partial<BenchOptions> = {}): Promise<BenchResults> {
  const options: BenchOptions = { ...DEFAULT_OPTIONS, ...overrides };
  const { log } = options;
  if (!(ENGINES as readonly string[]).includes(options.engine))
    throw new Error(
      `--engine ${options.engine} is not supported: the benchmark runs on ${ENGINES.join(', ')} only`,
    );
  // The CLI's and the API's modules are loaded in this process one after the other (below);
  // Nest would warn that both register a default data source. They never run at once.
  Logger.overrideLogger(['error', 'fatal']);
  const startedAt = new Date();
  const now = options.now ?? startedAt;
  const label = `stats_bench_${Date.now().toString(36)}`;
  const store =
    options.engine === 'sqlite'
      ? sqliteStore(options.reuse ? path.resolve(options.reuse) : path.join(tmpdir(), `${label}.sqlite`))
      : await serverStore(options.server, options.reuse ?? label);
  const database = store.name;
  const env = { ...store.env, REDIS_URL: '', LOG_LEVEL: 'warn' };
  // One key reads one site here: per-key and per-site concurrency caps (where the API has them)
  // and the rate limit are set out of reach, as `npm run load` does for its throughput runs.
  const apiEnv = {
    ...env,
    ...store.apiEnv,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    REPORT_CONCURRENCY_PER_KEY: '1000',
    REPORT_CONCURRENCY_PER_SITE: '1000',
  };
  const dataDir = options.dataDir ?? path.join(tmpdir(), `${label}-data`);
  const progress = new Progress(options.progress);
  const processes: ApiProcess[] = [];
  let raw: RawReports | undefined;
  const phases: Record<string, number> = {};
  let phaseStarted = Date.now();
  const phase = (name: string) => {
    phases[name] = round((Date.now() - phaseStarted) / 1000);
    phaseStarted = Date.now();
  };

  try {
    const machine = {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: round(totalmem() / 2 ** 30),
      node: process.version,
      load_average_start: loadavg().map((n) => round(n, 2)),
      load_average_end: [] as number[],
    };
    log(
      `machine: ${machine.cpus} cores (${machine.cpu_model}), ${machine.memory_gb} GB; load ${machine.load_average_start.join(' ')}`,
    );

    // Sites, the user and its key, registered events and goals: the operator's AdminService
    // (what sites:create, keys:create, goals:create… run), in-process to spare 1,000 CLI boots.
    log(`database ${database}: migrate, sites, goals, events…`);
    await cli(['migrate'], env, false);
    // After migrate: the SQLite file exists then, and its settings can be read.
    const engine = await store.describe();
    log(engine.summary);
    let dataset: DatasetSummary | null = null;
    let site: SiteContext;
    let key: string;
    let userId: number;
    const ingest: BenchResults['ingest'] = {};
    let files: DatasetSummary['files'] | undefined;
    if (options.reuse) {
      ({ key, site, userId } = await existingSite(store, label));
      phase('setup');
      log('aggregate (whatever the migrations queued)…');
      ingest.aggregate_after_migrate = await cli(['aggregate'], env, options.progress);
      log(`  ${String(ingest.aggregate_after_migrate.seconds)} s`);
      phase('import_and_aggregate');
    } else {
      const profiles = siteProfiles({
        scale: options.scale,
        seed: options.seed,
        smallSites: options.smallSites,
        bigSiteTimezone: options.timezone,
      });
      const big = profiles[0];
      ({ key, userId } = await createSites(store, label, profiles));
      phase('setup');
      log(`generating scale ${options.scale} (seed ${options.seed}) into ${dataDir}…`);
      progress.start('generate [{bar}] {percentage}% | {value}/{total} hours', 30 * 24);
      dataset = await writeDataset(
        {
          scale: options.scale,
          seed: options.seed,
          smallSites: options.smallSites,
          now,
          dir: dataDir,
          bigSiteTimezone: options.timezone,
          onHits: () => progress.increment(),
        },
        profiles,
      );
      files = dataset.files;
      progress.stop();
      log(
        `dataset: big site ${dataset.big_site.pageviews} pageviews, ${dataset.big_site.sessions} sessions, ` +
          `${dataset.big_site.hits} hits; ${dataset.small_sites.sites} small sites ${dataset.small_sites.hits} hits; ` +
          `${dataset.lines.main} + ${dataset.lines.hour} lines (${dataset.seconds} s)`,
      );

      phase('generate');
      log('import into empty tables…');
      const importEmpty = importFigures(await cli(['import', files.main], env, options.progress));
      ingest.import_empty = importEmpty;
      log(`  ${importEmpty.hits_per_second} hits/s (${String(importEmpty.seconds)} s)`);
      log('aggregate (full backfill)…');
      ingest.aggregate_backfill = await cli(['aggregate'], env, options.progress);
      log(`  ${String(ingest.aggregate_backfill.seconds)} s`);
      log('import and aggregate one more hour…');
      ingest.import_hour = importFigures(await cli(['import', files.hour], env, false));
      ingest.aggregate_hour = await cli(['aggregate'], env, false);
      log(`  aggregate ${String(ingest.aggregate_hour.seconds)} s`);

      phase('import_and_aggregate');
      site = {
        id: big.id,
        timezone: big.timezone,
        currency: big.currency,
        trackingMode: big.tracking,
      };
    }
    const today = siteToday(site);
    const all = endpoints(today);
    const list = options.only
      ? all.filter((e) => options.only!.some((prefix) => e.name.startsWith(prefix)))
      : all;
    if (list.length === 0) throw new Error(`--only ${options.only?.join(',')} names no endpoint`);
    const rows = await store.counts(site.id);
    // The live site of the latest slice; the big site until there is one.
    let liveSiteId = site.id;
    const siteOf = (endpoint: Endpoint) => (endpoint.target === 'realtime' ? liveSiteId : site.id);

    // Realtime's window: before its requests and before its throughput run, the big site's
    // busiest half hour again on a new live site, stamped to end now (writeLiveSlice). A data
    // directory written before there was a live file gives its last half hour instead, whose
    // traffic follows the time of day the dataset ended at; without either (a --reuse run
    // without --data-dir) realtime reads the big site's empty window. The run says which.
    const liveFile = files?.live ?? path.join(dataDir, 'live.ndjson');
    const sourceFile = existsSync(liveFile) ? liveFile : (files?.hour ?? path.join(dataDir, 'hour.ndjson'));
    const liveDir = path.join(tmpdir(), `${label}-live`);
    const goLive = async (): Promise<void> => {
      if (!existsSync(sourceFile)) {
        log(`realtime: no ${sourceFile} (pass --data-dir of the kept run); its window is empty`);
        return;
      }
      mkdirSync(liveDir, { recursive: true });
      const n = (ingest.live_slices ?? []).length + 1;
      liveSiteId = await createLiveSite(store, userId, site, n);
      const slice = await writeLiveSlice(sourceFile, path.join(liveDir, `live-${n}.ndjson`), {
        bigSiteId: site.id,
        liveSiteId,
        at: new Date(),
        tag: `-live${n}-${label}`,
      });
      const figures = importFigures(await cli(['import', slice.file], env, false));
      (ingest.live_slices ??= []).push(figures);
      log(
        `realtime: ${LIVE_MINUTES} minutes of the big site (${slice.lines} hits of ${path.basename(sourceFile)}) on live site ${liveSiteId}, ending now`,
      );
    };

    // The rows timed queued (after the other filtered ones): before the first, late `/pricing`
    // pageviews of derived sessions in `hour.ndjson` imported and not aggregated
    // (writeQueuedSlice); after the loop, `aggregate`, so that every later phase reads aggregated
    // data again. Unique hit ids each run, so a --reuse run queues sessions too (its big site then
    // holds 50 more pageviews each time).
    let queuedImported = false;
    let queuedTried = false;
    const goQueued = async (): Promise<void> => {
      queuedTried = true;
      const hourFile = files?.hour ?? path.join(dataDir, 'hour.ndjson');
      if (!existsSync(hourFile)) {
        log(`queued rows: no ${hourFile} (pass --data-dir of the kept run); timed with nothing queued`);
        return;
      }
      mkdirSync(liveDir, { recursive: true });
      const slice = await writeQueuedSlice(hourFile, path.join(liveDir, 'queued.ndjson'), {
        bigSiteId: site.id,
        page: '/pricing',
        tag: `-queued-${label}`,
      });
      ingest.queued_slice = importFigures(await cli(['import', slice.file], env, false));
      queuedImported = true;
      log(`queued rows: ${slice.lines} derived sessions gained a late /pricing pageview, not aggregated yet`);
    };

    // Latency: the production path over HTTP, report cache off, one request at a time; then,
    // right after each report (so that both see the same load on the machine), the same
    // requests' raw computation in-process without the time budget: speed-up and parity.
    const api = await startApiProcess({ ...apiEnv, REPORT_CACHE_MB: '0' }, { discardStdout: true });
    processes.push(api);
    raw = await (await import('./raw-context')).RawReports.open(store.apiEnv);
    const results: EndpointResult[] = [];
    let parityOk = true;
    for (const endpoint of list) {
      if (endpoint.target === 'realtime') await goLive();
      if (endpoint.queued && !queuedTried) await goQueued();
      const url = (n: number) => `${api.url}${pathOf(endpoint, siteOf(endpoint), n)}`;
      await timedGet(url(0), key);
      const times: number[] = [];
      const statuses: number[] = [];
      const kept: Array<{ status: number; body: string }> = [];
      const started = Date.now();
      let capped = false;
      for (let n = 0; n < options.requests; n++) {
        if (n >= options.rawRuns && Date.now() - started > options.endpointSeconds * 1000) {
          capped = true;
          break;
        }
        const r = await timedGet(url(n), key);
        times.push(r.ms);
        statuses.push(r.status);
        if (n < options.rawRuns) kept.push({ status: r.status, body: r.body });
      }
      const latency = latencyFigures(times, statuses, capped);
      const result: EndpointResult = {
        name: endpoint.name,
        route: endpoint.route,
        target: endpoint.target,
        latency,
      };
      if (endpoint.target === 'realtime' && kept[0]?.status === 200) {
        const { active_visitors, pageviews_last_30_minutes } = (
          JSON.parse(kept[0].body) as { data: NonNullable<EndpointResult['window']> }
        ).data;
        result.window = { active_visitors, pageviews_last_30_minutes };
      }
      results.push(result);
      log(
        `${endpoint.name.padEnd(24)} p50 ${String(latency.p50_ms).padStart(8)} ms  p95 ${String(latency.p95_ms).padStart(8)} ms  ` +
          `p99 ${String(latency.p99_ms).padStart(8)} ms  (${latency.requests} requests${latency.errors ? `, ${latency.errors} not 200` : ''})` +
          (result.window
            ? `  window: ${result.window.active_visitors} active visitors, ${result.window.pageviews_last_30_minutes} pageviews`
            : ''),
      );
      if (!endpoint.raw) continue;

      const rawTimes: number[] = [];
      const parity = { compared: 0, agreed: 0, differences: [] as string[], not_compared: [] as string[] };
      for (let n = 0; n < options.rawRuns; n++) {
        const { body, ms } = await raw.run(endpoint, site, endpoint.params(n));
        rawTimes.push(ms);
        const http = kept[n];
        if (!http || http.status !== 200) {
          parity.not_compared.push(`request ${n}: HTTP ${http?.status ?? 'not sent'}`);
          continue;
        }
        parity.compared++;
        const difference = firstDifference(JSON.parse(http.body), body);
        if (difference)
          parity.differences.push(`request ${n} (${pathOf(endpoint, site.id, n)}): ${difference}`);
        else parity.agreed++;
      }
      // A request answered 503 (time budget) cannot be compared; it is listed, not a failure.
      if (parity.differences.length > 0) parityOk = false;
      const rawMedian = round(median(rawTimes));
      result.raw = { runs: rawTimes.length, times_ms: rawTimes.map((t) => round(t)), median_ms: rawMedian };
      // Against the answered requests only: a 503 at the time budget is no speed.
      if (latency.answered_p50_ms !== undefined)
        result.speedup = round(rawMedian / latency.answered_p50_ms, 2);
      result.parity = parity;
      log(
        `${'  raw'.padEnd(24)} median ${String(rawMedian).padStart(5)} ms  speed-up ${result.speedup ?? '—'}×  ` +
          `parity ${parity.agreed}/${parity.compared}${parity.differences.length ? ` DIFFERS: ${parity.differences[0]}` : ''}`,
      );
    }
    await raw.close();
    raw = undefined;
    if (queuedImported) {
      ingest.aggregate_queued = await cli(['aggregate'], env, false);
      log(`queued rows: aggregate ${String(ingest.aggregate_queued.seconds)} s`);
    }

    phase('latency_and_raw');
    // Throughput: every route under autocannon, one route at a time, cache still off.
    const throughput: ThroughputFigures[] = [];
    // Light routes first: requests of a slow route still queued in the API's pool when its run
    // ends would otherwise hold up the next route's run.
    const routes = [...new Set(list.map((e) => e.route))].sort(
      (a, b) =>
        Number(list.some((e) => e.route === a && e.raw)) - Number(list.some((e) => e.route === b && e.raw)),
    );
    for (const route of routes) {
      // A route's own report: issue #11's filtered variants are timed in the latency phase only.
      // Mixed into their route's run, their seconds of database time each (a page condition up
      // to the 10-s budget) set the route's throughput: run Z's overview route, unfiltered at
      // 36 ms, answered 0.1 req/s with them.
      const variants = list.filter((e) => e.route === route && !e.target.startsWith('filter'));
      if (variants.length === 0) continue;
      let n = 0;
      const pick = () => {
        const endpoint = variants[n % variants.length];
        const path = pathOf(
          endpoint,
          siteOf(endpoint),
          Math.floor(n / variants.length) % Math.max(options.requests, 1),
        );
        n++;
        return { path, key };
      };
      await settle(api);
      if (variants.some((e) => e.target === 'realtime')) await goLive();
      const figures = await throughputRun(api, route, options.connections, options.duration, pick);
      throughput.push(figures);
      log(
        `load ${route.padEnd(48)} ${String(figures.requests_per_second).padStart(6)} req/s  p50 ${figures.p50_ms} ms  ` +
          `p99 ${figures.p99_ms} ms  non-2xx ${figures.non_2xx}  errors ${figures.errors}  RSS ${figures.rss_peak_mb} MB`,
      );
    }
    await settle(api);
    const rssAfter = rssMb(api.child.pid!);
    await api.stop();

    // Repeated identical requests: cache on, the same overview again and again vs /health/live.
    const cached = await startApiProcess({ ...apiEnv, REPORT_CACHE_MB: '64' }, { discardStdout: true });
    processes.push(cached);
    const overview = all.find((e) => e.name === 'overview')!;
    const overviewPath = pathOf(overview, site.id, 1);
    await timedGet(`${cached.url}${overviewPath}`, key);
    const overviewHit = await throughputRun(
      cached,
      overview.route,
      options.connections,
      options.duration,
      () => ({
        path: overviewPath,
        key,
      }),
    );
    const live = await throughputRun(cached, '/health/live', options.connections, options.duration, () => ({
      path: '/health/live',
      key,
    }));
    await cached.stop();
    const ratio = round(overviewHit.requests_per_second / Math.max(1, live.requests_per_second), 2);
    log(
      `cache: overview ${overviewHit.requests_per_second} req/s, /health/live ${live.requests_per_second} req/s, ratio ${ratio}`,
    );

    phase('throughput_and_cache');
    if (files) {
      log('import the last day again as new hits (tables already loaded)…');
      ingest.import_populated = importFigures(await cli(['import', files.again], env, options.progress));
      ingest.aggregate_day = await cli(['aggregate'], env, false);
      log(
        `  ${ingest.import_populated.hits_per_second} hits/s; aggregate ${String(ingest.aggregate_day.seconds)} s`,
      );
      phase('import_again');
    }
    machine.load_average_end = loadavg().map((n) => round(n, 2));
    const finished: BenchResults = {
      started_at: startedAt.toISOString(),
      finished_at: new Date().toISOString(),
      options: {
        engine: options.engine,
        scale: options.scale,
        seed: options.seed,
        smallSites: options.smallSites,
        requests: options.requests,
        rawRuns: options.rawRuns,
        connections: options.connections,
        duration: options.duration,
        endpointSeconds: options.endpointSeconds,
        timezone: options.timezone,
        now: now.toISOString(),
        dataDir,
        keep: options.keep,
        reuse: options.reuse,
        only: options.only,
      },
      machine,
      engine,
      database,
      dataset,
      site: { id: site.id, timezone: site.timezone, today },
      rows,
      ingest,
      endpoints: results,
      throughput,
      cache: { path: overviewPath, overview_hit: overviewHit, health_live: live, ratio },
      api_rss_mb: {
        peak: Math.max(...throughput.map((t) => t.rss_peak_mb), overviewHit.rss_peak_mb, live.rss_peak_mb),
        after_throughput: rssAfter,
      },
      phases,
      parity_ok: parityOk,
    };
    return finished;
  } finally {
    progress.stop();
    await raw?.close();
    for (const p of processes) await p.stop('SIGTERM');
    rmSync(path.join(tmpdir(), `${label}-live`), { recursive: true, force: true });
    // A kept database keeps its data, not this run's API account: a --reuse run makes its own.
    if (options.reuse || options.keep) await store.dropApiAccount();
    else {
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    await store.close();
  }
}

/** Writes the results under bench/ (gitignored) and returns the file's path. */
export function writeResults(results: BenchResults, dir = path.join(__dirname, '../../bench')): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `results-bench-${results.started_at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ ...results, file: undefined }, null, 2)}\n`);
  return file;
}
