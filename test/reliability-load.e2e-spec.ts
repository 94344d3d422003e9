import { runLoad } from '../scripts/load';

/**
 * A smoke run of `npm run load` at a tiny size (3 s, 10 connections, 2 days of demo data), so
 * that the load script keeps working as routes are added: every documented route must answer
 * 2xx under concurrency with several keys and sites, and the rate-limit phase must show
 * exactly the limit in 2xx and the rest 429. The full run (3 × 60 s, 200 connections) is
 * `npm run load`, outside `npm test`.
 */
describe('npm run load, smoke size', () => {
  it('serves the whole route mix without a non-2xx, and limits one key at its limit', async () => {
    const results = await runLoad({
      duration: 3,
      connections: 10,
      runs: 1,
      days: 2,
      rateLimitPhaseSeconds: 2,
      log: () => undefined,
    });
    expect(results.data.routes.length).toBeGreaterThanOrEqual(9);
    expect(results.runs).toHaveLength(1);
    expect(results.runs[0]).toMatchObject({ non_2xx: 0, errors: 0, timeouts: 0 });
    expect(results.runs[0].requests).toBeGreaterThan(50);
    expect(results.rate_limit_phase.status_codes['200']).toBe(100);
    expect(results.rate_limit_phase.status_codes['429']).toBeGreaterThan(0);
    expect(results.ok).toBe(true);
  }, 120_000);
});
