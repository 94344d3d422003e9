/** The benchmark's results as the table `npm run bench` prints. */
import type { BenchResults } from './run';

const pad = (cells: string[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [
    pad(header, widths),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map((r) => pad(r, widths)),
  ].join('\n');
}

const num = (n: number | undefined, digits = 1) =>
  n === undefined || Number.isNaN(n) ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: digits });

export function formatResults(r: BenchResults): string {
  const s = r.engine.settings;
  const mb = (v: string | undefined) => (v === undefined ? '?' : `${Math.round(Number(v) / 2 ** 20)} MB`);
  const lines: string[] = [];
  lines.push(
    `machine: ${r.machine.cpus} cores (${r.machine.cpu_model}), ${r.machine.memory_gb} GB RAM, Node ${r.machine.node}; ` +
      `load average at start ${r.machine.load_average_start.join(' ')}, at end ${r.machine.load_average_end.join(' ')}`,
    r.engine.name === 'mariadb'
      ? `MariaDB ${r.engine.version}: innodb_buffer_pool_size ${mb(s.innodb_buffer_pool_size)}, innodb_log_file_size ${mb(
          s.innodb_log_file_size,
        )}, innodb_flush_log_at_trx_commit ${s.innodb_flush_log_at_trx_commit}, innodb_flush_method ${s.innodb_flush_method}, ` +
          `innodb_io_capacity ${s.innodb_io_capacity}, log_bin ${s.log_bin}, max_connections ${s.max_connections}`
      : r.engine.summary,
    r.dataset
      ? `dataset: scale ${r.options.scale}, seed ${r.options.seed}, ${r.dataset.from} → ${r.dataset.to}; big site ` +
          `(${r.site.timezone}) ${num(r.dataset.big_site.pageviews, 0)} pageviews, ${num(r.dataset.big_site.sessions, 0)} sessions, ` +
          `${num(r.dataset.big_site.hits, 0)} hits; ${r.dataset.small_sites.sites} small sites, ${num(r.dataset.small_sites.hits, 0)} hits; ` +
          `${num(r.dataset.late_hits, 0)} late, ${num(r.dataset.resent_hits, 0)} sent twice`
      : `dataset: the kept database ${r.database} (--reuse); big site (${r.site.timezone}) ${num(r.rows.site_hits, 0)} hits, ` +
          `${num(r.rows.site_sessions, 0)} sessions; ${num(r.rows.hits, 0)} hits in all`,
    '',
  );
  const i = r.ingest;
  const rows: Array<[string, Record<string, unknown> | undefined]> = [
    ['import into empty tables', i.import_empty],
    ['aggregate, full backfill', i.aggregate_backfill],
    ['import one more hour', i.import_hour],
    ['aggregate one more hour', i.aggregate_hour],
    ['import the last day again (loaded tables)', i.import_populated],
    ['aggregate that day', i.aggregate_day],
    ['aggregate after migrate (kept database)', i.aggregate_after_migrate],
  ];
  const cell = (c: unknown) => (typeof c === 'number' ? num(c, 2) : typeof c === 'string' ? c : '');
  lines.push(
    table(
      ['ingest', 'lines', 'seconds', 'hits/s'],
      rows
        .filter(([, f]) => f !== undefined)
        .map(([name, f]) => [name, cell(f?.lines), cell(f?.seconds), cell(f?.hits_per_second)]),
    ),
    '',
  );
  const load = new Map(r.throughput.map((t) => [t.route, t]));
  lines.push(
    table(
      [
        'endpoint (cache off)',
        'n',
        'p50 ms',
        'p95 ms',
        'p99 ms',
        'not 200',
        'raw ms',
        'speed-up',
        'parity',
        'req/s',
        'load p50',
        'load non-2xx',
      ],
      r.endpoints.map((e) => {
        const t = load.get(e.route);
        const p = e.parity;
        return [
          e.name,
          `${e.latency.requests}${e.latency.capped ? '*' : ''}`,
          num(e.latency.p50_ms),
          num(e.latency.p95_ms),
          num(e.latency.p99_ms),
          String(e.latency.errors),
          e.raw ? num(e.raw.median_ms) : '—',
          e.speedup !== undefined ? `${num(e.speedup, 2)}×` : '—',
          p
            ? p.differences.length
              ? `DIFFERS ${p.differences.length}`
              : p.compared === 0
                ? 'n/a (503)'
                : `${p.agreed}/${p.compared}`
            : '—',
          t ? num(t.requests_per_second, 0) : '—',
          t ? num(t.p50_ms, 0) : '—',
          t ? String(t.non_2xx + t.errors) : '—',
        ];
      }),
    ),
    `(* stopped after ${r.options.endpointSeconds} s; raw = median of ${r.options.rawRuns} in-process runs on the raw ` +
      `tables without the time budget; speed-up = raw ÷ p50 of the requests answered 200; throughput per route: ${r.options.connections} connections × ${r.options.duration} s)`,
    '',
    `cache hit (the same overview again and again): ${num(r.cache.overview_hit.requests_per_second, 0)} req/s; ` +
      `/health/live ${num(r.cache.health_live.requests_per_second, 0)} req/s; ratio ${r.cache.ratio}`,
    `API RSS: peak ${r.api_rss_mb.peak} MB under load, ${r.api_rss_mb.after_throughput} MB after`,
    `parity of every report (HTTP vs raw, requests answered 200): ${r.parity_ok ? 'ok' : 'NOT OK'}`,
    `phases (s): ${Object.entries(r.phases)
      .map(([name, seconds]) => `${name} ${seconds}`)
      .join(', ')}`,
  );
  return lines.join('\n');
}
