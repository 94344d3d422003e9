import { runBench } from '../scripts/bench/run';
import { endpoints } from '../scripts/bench/endpoints';
import { firstDifference } from '../scripts/bench/parity';
import { TEST_ENGINE } from './support/test-env';

/**
 * `npm run bench` at smoke size (~130k hits, short phases), so that the benchmark keeps
 * working on a fresh clone as the code changes. It asserts no speed figure: only that the run
 * completes, that the CLI imported every generated line, and that every report answered over
 * HTTP (whatever tables the planner chose) agrees with the same report computed in-process on
 * the raw tables. The full run is `npm run bench` (BENCHMARKS.md).
 */
describe(`npm run bench, smoke size, on ${TEST_ENGINE}`, () => {
  it('completes, imports every line, and every report agrees with its raw computation', async () => {
    const results = await runBench({
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
    });

    for (const step of ['import_empty', 'import_hour', 'import_populated'] as const) {
      const figures = results.ingest[step];
      expect(figures).toMatchObject({ rejected: 0, interrupted: false });
      expect(Number(figures.imported) + Number(figures.duplicates)).toBe(figures.lines);
    }
    expect(results.ingest.import_empty.lines).toBe(results.dataset.lines.main);
    expect(results.ingest.import_empty.duplicates).toBeGreaterThan(0);
    expect(results.rows.site_sessions).toBe(results.dataset.big_site.sessions);

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
    const routes = new Set(endpoints(results.site.today).map((e) => e.route));
    expect(results.throughput.map((t) => t.route).sort()).toEqual([...routes].sort());
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
});
