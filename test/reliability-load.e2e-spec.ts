import { runLoad } from '../scripts/load';

/**
 * A smoke run of `npm run load` at a tiny size (3 s, 10 connections, 2 days of demo data), so
 * that the load script keeps working as routes are added: every documented route must answer
 * 2xx under concurrency with several keys and sites, the rate-limit phase (a fixed count of
 * requests, not a duration, so the machine's speed cannot change it) must show exactly the
 * limit in 2xx and the rest 429, and the fairness phase must hold a flooding key at its
 * concurrency cap while another key is served. The full run (3 × 60 s, 200 connections) is
 * `npm run load`, outside `npm test`.
 */
describe('npm run load, smoke size', () => {
  it('serves the whole route mix without a non-2xx, and limits one key at its limit', async () => {
    const results = await runLoad({
      duration: 3,
      connections: 10,
      runs: 1,
      days: 2,
      rateLimitPhaseExtra: 20,
      fairnessSeconds: 2,
      log: () => undefined,
    });
    expect(results.data.routes.length).toBeGreaterThanOrEqual(9);
    expect(results.runs).toHaveLength(1);
    expect(results.runs[0]).toMatchObject({ non_2xx: 0, errors: 0, timeouts: 0 });
    expect(results.runs[0].requests).toBeGreaterThan(50);
    expect(results.rate_limit_phase.status_codes['200']).toBe(100);
    expect(results.rate_limit_phase.status_codes['429']).toBe(20);
    expect(results.ok).toBe(true);
    // Fairness phase: the flooding key is held at its concurrency cap, the victim keeps getting 200s.
    // (Its latency ratio is a speed figure, printed by `npm run load`, not asserted here.)
    expect(results.fairness_phase!.flooder_status_codes['429']).toBeGreaterThan(0);
    expect(Object.keys(results.fairness_phase!.victim_under_flood.statuses)).toEqual(['200']);
    expect(Object.keys(results.fairness_phase!.victim_idle.statuses)).toEqual(['200']);
  }, 120_000);
});
