import { rmSync } from 'node:fs';
import { BenchOptions, BenchResults, runBench } from '../scripts/bench/run';
import { serverStore, sqliteStore } from '../scripts/bench/store';
import { endpoints } from '../scripts/bench/endpoints';
import { firstDifference } from '../scripts/bench/parity';
import { rssMb } from '../scripts/load';
import { TEST_ENGINE } from './support/test-env';

/**
 * `npm run bench` at smoke size (~130k hits, short phases), so that the benchmark keeps
 * working on a fresh clone as the code changes. It asserts no speed figure: only that the run
 * completes, that the CLI imported every generated line, and that every report answered over
 * HTTP (whatever tables the planner chose) agrees with the same report computed in-process on
 * the raw tables. The full run is `npm run bench` (BENCHMARKS.md).
 */
describe(`npm run bench, smoke size, on ${TEST_ENGINE}`, () => {
  const options: Partial<BenchOptions> = {
    engine: TEST_ENGINE,
    scale: 0.01,
    requests: 3,
    rawRuns: 3,
    connections: 4,
    duration: 1,
    server: process.env.TEST_DATABASE_URL || 'mysql://root@127.0.0.1:3306',
    progress: false,
    // Each phase's line with its time, so that a slow phase shows in the test output.
    log: (line) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`),
  };
  let kept: BenchResults | undefined;

  afterAll(async () => {
    if (!kept) return;
    const store =
      TEST_ENGINE === 'sqlite'
        ? sqliteStore(kept.database)
        : await serverStore(options.server!, kept.database);
    await store.drop();
    await store.close();
    rmSync(kept.options.dataDir!, { recursive: true, force: true });
  });

  it('completes, imports every line, and every report agrees with its raw computation', async () => {
    // Kept for the --reuse run below.
    const results = await runBench({ ...options, keep: true });
    kept = results;

    for (const step of ['import_empty', 'import_hour', 'import_populated'] as const) {
      const figures = results.ingest[step]!;
      expect(figures).toMatchObject({ rejected: 0, interrupted: false });
      expect(Number(figures.imported) + Number(figures.duplicates)).toBe(figures.lines);
    }
    expect(results.ingest.import_empty!.lines).toBe(results.dataset!.lines.main);
    expect(results.ingest.import_empty!.duplicates).toBeGreaterThan(0);
    expect(results.rows.site_sessions).toBe(results.dataset!.big_site.sessions);

    const reports = endpoints(results.site.today).filter((e) => e.raw);
    expect(reports.length).toBeGreaterThanOrEqual(11);
    expect(results.endpoints.filter((e) => e.parity).map((e) => e.name)).toEqual(reports.map((e) => e.name));
    for (const endpoint of results.endpoints) {
      expect({ name: endpoint.name, codes: endpoint.latency.status_codes }).toEqual({
        name: endpoint.name,
        codes: { 200: 3 },
      });
      if (!endpoint.parity) continue;
      expect({ name: endpoint.name, ...endpoint.parity }).toEqual({
        name: endpoint.name,
        compared: 3,
        agreed: 3,
        differences: [],
        not_compared: [],
      });
    }
    expect(results.parity_ok).toBe(true);
    expect(results.engine.name).toBe(TEST_ENGINE);
    // Realtime reads the live site, its window the big site's busiest half hour (live.ndjson)
    // stamped to end now: one slice before its requests, one before its throughput run.
    expect(results.ingest.live_slices).toHaveLength(2);
    expect(results.dataset!.lines.live).toBeGreaterThan(0);
    for (const slice of results.ingest.live_slices!) {
      expect(slice).toMatchObject({ rejected: 0, interrupted: false });
      expect(slice.lines).toBe(results.dataset!.lines.live);
      expect(Number(slice.imported) + Number(slice.duplicates)).toBe(slice.lines);
    }
    // The rows timed queued: derived sessions gained a late /pricing pageview, imported before
    // them and aggregated after them (every one re-derived, beside the live slice's sessions),
    // so later phases read rollups again.
    const queued = endpoints(results.site.today).filter((e) => e.queued);
    expect(queued.length).toBeGreaterThanOrEqual(3);
    expect(results.ingest.queued_slice).toMatchObject({ rejected: 0, interrupted: false, duplicates: 0 });
    expect(results.ingest.queued_slice!.lines).toBeGreaterThan(0);
    expect(results.ingest.queued_slice!.imported).toBe(results.ingest.queued_slice!.lines);
    expect(Number(results.ingest.aggregate_queued!.sessions)).toBeGreaterThanOrEqual(
      Number(results.ingest.queued_slice!.lines),
    );
    expect(results.ingest.aggregate_queued!.remaining).toBe(0);
    const realtime = results.endpoints.find((e) => e.target === 'realtime')!;
    expect(realtime.window!.pageviews_last_30_minutes).toBeGreaterThan(0);
    const routes = new Set(endpoints(results.site.today).map((e) => e.route));
    expect(results.throughput.map((t) => t.route).sort()).toEqual([...routes].sort());
  }, 900_000);

  it('times chosen reports again on the kept database with --reuse and --only, importing nothing', async () => {
    expect(kept).toBeDefined();
    const again = await runBench({
      ...options,
      rawRuns: 1,
      reuse: kept!.database,
      only: ['overview', 'engagement'],
    });
    expect(again.dataset).toBeNull();
    expect(Object.keys(again.ingest)).toEqual(['aggregate_after_migrate']);
    // Everything was aggregated by the first run: nothing left to do.
    expect(again.ingest.aggregate_after_migrate).toMatchObject({
      sessions: 0,
      remaining: 0,
      sketch_hours: 0,
      goal_sites: 0,
    });
    expect(again.site.id).toBe(kept!.site.id);
    expect(again.parity_ok).toBe(true);
    // --only: the endpoints whose names start with one of the prefixes, and their routes.
    const named = kept!.endpoints.map((e) => e.name).filter((n) => /^(overview|engagement)/.test(n));
    expect(again.endpoints.map((e) => e.name)).toEqual(named);
    expect(named.length).toBeGreaterThanOrEqual(5);
    expect(again.throughput.map((t) => t.route).sort()).toEqual(
      ['/api/v1/sites/{id}/analytics/engagement', '/api/v1/sites/{id}/analytics/overview'].sort(),
    );
    for (const endpoint of again.endpoints) expect(endpoint.latency.status_codes).toEqual({ 200: 3 });
  }, 900_000);

  it('finds a difference between two report bodies, and tolerates only an estimate of visitors', () => {
    const raw = { data: { visitors: 1000, sessions: 1200, series: [{ visitors: 10 }] } };
    expect(firstDifference(raw, structuredClone(raw))).toBeUndefined();
    expect(firstDifference({ data: { ...raw.data, visitors: 1009 } }, raw)).toBeUndefined();
    expect(firstDifference({ data: { ...raw.data, visitors: 1011 } }, raw)).toBe(
      '$.data.visitors: 1011 ≠ 1000',
    );
    expect(firstDifference({ data: { ...raw.data, sessions: 1201 } }, raw)).toBe(
      '$.data.sessions: 1201 ≠ 1200',
    );
    expect(firstDifference({ data: { ...raw.data, series: [] } }, raw)).toBe(
      '$.data.series: 0 items ≠ 1 items',
    );
  });

  it("reads a process's memory, and says so plainly when the process has gone", () => {
    expect(rssMb(process.pid)).toBeGreaterThan(0);
    // Past the kernel's largest pid (2^22): no such process.
    expect(() => rssMb(4_194_305)).toThrow('the API process (pid 4194305) is no longer running');
  });

  it('tolerates in the figures computed from visitors only their share of the estimate', () => {
    // 1,000 visitors of whom 900 new: an estimate 1 % off moves returning by up to 10.
    const engagement = {
      returning_visitors: { new_visitors: 900, returning_visitors: 100, returning_share: 10 },
    };
    const off = (returning: number, share: number) => ({
      returning_visitors: { new_visitors: 900, returning_visitors: returning, returning_share: share },
    });
    expect(firstDifference(off(110, 10.89), engagement)).toBeUndefined();
    expect(firstDifference(off(111, 10.89), engagement)).toBe(
      '$.returning_visitors.returning_visitors: 111 ≠ 100',
    );
    expect(firstDifference(off(110, 11.1), engagement)).toBe(
      '$.returning_visitors.returning_share: 11.1 ≠ 10',
    );
    // change = +25 %: each side 1 % off moves it by up to 2.02 % of 125.
    const overview = { comparison: { visitors: 800, change: { visitors: 25, sessions: 25 } } };
    const change = (visitors: number) => ({
      comparison: { visitors: 800, change: { visitors, sessions: 25 } },
    });
    expect(firstDifference(change(27.5), overview)).toBeUndefined();
    expect(firstDifference(change(27.6), overview)).toBe('$.comparison.change.visitors: 27.6 ≠ 25');
  });
});
