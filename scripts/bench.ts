/**
 * `npm run bench [-- options]`: the benchmark of BENCHMARKS.md (scripts/bench/run.ts).
 *
 *   --scale 1            1 = ~10M pageviews / ~3M sessions on the big site (0.1 = 1M, 0.01 = 100k)
 *   --seed 42            the dataset's seed (same seed, scale and --now: the same files)
 *   --now <ISO time>     end of the 30 days of traffic (default: now)
 *   --small-sites 1000   small sites beside the big one
 *   --timezone America/New_York   the big site's time zone
 *   --requests 50        timed requests per endpoint (cache off)
 *   --raw-runs 3         in-process raw computations per report
 *   --endpoint-seconds 300   stop timing an endpoint after this long
 *   --connections 50 --duration 30   autocannon, per route
 *   --quick              --requests 20 --duration 5 (a first look)
 *   --engine mariadb     or sqlite: the embedded engine, in a file of its own under the temp directory
 *   --data-dir <dir>     where the NDJSON files go (default: the system's temp directory)
 *   --keep               keep the database and the files
 *   --reuse <database>   time the reports on a database (or SQLite file) a --keep run left: no
 *                        dataset, no import; migrate, aggregate what that queued, then measure
 *   --only <names>       comma-separated name prefixes of the endpoints to time (e.g. overview,engagement)
 * BENCH_DATABASE_URL (else DATABASE_URL, else mysql://root@127.0.0.1:3306) names the server.
 */
import path from 'node:path';
import { BenchOptions, runBench, writeResults } from './bench/run';
import { formatResults } from './bench/report';

const NUMBERS: Record<string, keyof BenchOptions> = {
  '--scale': 'scale',
  '--seed': 'seed',
  '--small-sites': 'smallSites',
  '--requests': 'requests',
  '--raw-runs': 'rawRuns',
  '--endpoint-seconds': 'endpointSeconds',
  '--connections': 'connections',
  '--duration': 'duration',
};

export function parseBenchArgs(argv: string[]): Partial<BenchOptions> {
  const options: Partial<BenchOptions> = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--keep') options.keep = true;
    else if (flag === '--quick') Object.assign(options, { requests: 20, duration: 5 });
    else if (flag in NUMBERS) {
      const n = Number(value);
      const positive =
        flag === '--scale'
          ? n > 0 && n <= 10
          : Number.isInteger(n) && n >= (flag === '--small-sites' || flag === '--seed' ? 0 : 1);
      if (value === undefined || !positive)
        throw new Error(`${flag} needs ${flag === '--scale' ? 'a number in (0, 10]' : 'a whole number'}`);
      (options as Record<string, unknown>)[NUMBERS[flag]] = n;
      i++;
    } else if (
      flag === '--engine' ||
      flag === '--timezone' ||
      flag === '--data-dir' ||
      flag === '--now' ||
      flag === '--reuse' ||
      flag === '--only'
    ) {
      if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`);
      if (flag === '--engine') options.engine = value;
      else if (flag === '--timezone') options.timezone = value;
      else if (flag === '--data-dir') options.dataDir = path.resolve(value);
      else if (flag === '--reuse') options.reuse = value;
      else if (flag === '--only') options.only = value.split(',').map((name) => name.trim());
      else {
        const now = new Date(value);
        if (Number.isNaN(now.getTime())) throw new Error('--now needs an ISO 8601 time');
        options.now = now;
      }
      i++;
    } else throw new Error(`unknown option ${flag} (see the comment at the top of scripts/bench.ts)`);
  }
  return options;
}

async function main(): Promise<void> {
  const results = await runBench(parseBenchArgs(process.argv.slice(2)));
  const file = writeResults(results);
  process.stdout.write(`\n${formatResults(results)}\nresults: ${path.relative(process.cwd(), file)}\n`);
  process.exitCode = results.parity_ok ? 0 : 1;
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  });
}
