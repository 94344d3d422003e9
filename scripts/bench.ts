/**
 * `npm run bench`: ingestion and report latency on the demo data, one request at a time.
 *
 * Seeds a database of its own with the CLI's `demo` (import and aggregate rates come from its
 * output), then times each documented route of site 1 (the shop) over the default trailing
 * 30 days and over `--days` days, `--samples` times each after one warm-up request,
 * sequentially against the built API. Prints medians and writes bench/results-bench-<time>.json
 * (gitignored). These are figures to compare runs of the same machine, not pass/fail targets.
 * Options: --samples 7 --days 90 --keep (keep the database).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { runCli, startApiProcess } from './fault/api-process';
import { SAMPLE_QUERIES } from '../test/support/routes';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const samples = arg('samples', 7);
const days = arg('days', 90);
const keep = process.argv.includes('--keep');

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function withRange(template: string, rangeDays: number | undefined): string {
  const sample = SAMPLE_QUERIES[template];
  const query = sample.replace(/&?(from|to)=\d{4}-\d{2}-\d{2}/g, '').replace(/^&/, '');
  if (rangeDays === undefined || !sample.includes('from=')) return query;
  const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);
  return [query, `from=${day(rangeDays - 1)}`, `to=${day(0)}`].filter(Boolean).join('&');
}

async function main(): Promise<void> {
  const server = new URL(
    process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/x',
  );
  const database = `stats_bench_${Date.now().toString(36)}`;
  const url = `${server.protocol}//${server.username || 'root'}${server.password ? `:${server.password}` : ''}@${server.host}/${database}`;
  const env = { DATABASE_URL: url, API_DATABASE_URL: '' };
  const cli = async (...args: string[]) =>
    JSON.parse(await runCli([...args, '--json'], env)) as Record<string, unknown>;
  const admin = await createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username || 'root'),
    password: decodeURIComponent(server.password),
  });
  const results: Record<string, unknown> = { at: new Date().toISOString(), days, samples };
  try {
    await cli('migrate');
    const demo = (await cli('demo', '--days', String(days))) as {
      key: string;
      loaded: Record<string, number>;
    };
    results.ingest = demo.loaded;
    process.stdout.write(
      `demo: ${demo.loaded.hits} hits, ${demo.loaded.sessions} sessions; import ${demo.loaded.hits_per_second} hits/s ` +
        `(${demo.loaded.import_seconds} s, generation included); aggregate ${demo.loaded.aggregate_seconds} s\n`,
    );

    const api = await startApiProcess(
      { ...env, RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'warn' },
      { discardStdout: true },
    );
    const reports: Array<{
      route: string;
      range: string;
      median_ms: number;
      min_ms: number;
      max_ms: number;
    }> = [];
    try {
      for (const [label, rangeDays] of [
        ['30 days (default)', undefined],
        [`${days} days`, days],
      ] as const) {
        for (const template of Object.keys(SAMPLE_QUERIES)) {
          const target = `${api.url}${template.replace('{id}', '1')}?${withRange(template, rangeDays)}`;
          const times: number[] = [];
          for (let i = 0; i < samples + 1; i++) {
            const started = process.hrtime.bigint();
            const res = await fetch(target, { headers: { Authorization: `Bearer ${demo.key}` } });
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`${target}: ${res.status}`);
            // The first request warms caches and the pool; it is not counted.
            if (i > 0) times.push(Number(process.hrtime.bigint() - started) / 1e6);
          }
          const row = {
            route: template,
            range: label,
            median_ms: Math.round(median(times) * 10) / 10,
            min_ms: Math.round(Math.min(...times) * 10) / 10,
            max_ms: Math.round(Math.max(...times) * 10) / 10,
          };
          reports.push(row);
          process.stdout.write(
            `${label.padEnd(18)} ${template.padEnd(52)} median ${String(row.median_ms).padStart(7)} ms\n`,
          );
        }
      }
    } finally {
      await api.stop();
    }
    results.reports = reports;
    const dir = path.join(__dirname, '..', 'bench');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `results-bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  } finally {
    if (!keep) await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
