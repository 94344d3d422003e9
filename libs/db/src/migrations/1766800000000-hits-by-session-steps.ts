import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's hits, in hit order (ts, seq), with what a page or goal matches (type, step_key),
 * as HitsByVisitorSteps1766200000000 did for a visitor's: a `page` filter (SPEC §3) and a
 * conversion test each look for a matching hit of every session of the range through this
 * index. With only (site_id, session_id, ts, seq) each of the session's hits meant a read of
 * its row to test the path: at 10M pageviews the sessions of a 30-day range that saw
 * `/pricing` took 18.8 s to count that way and 6.1 s with the index covering the test
 * (BENCHMARKS.md run AC; 27.8 s to rebuild the index there).
 */
export class HitsBySessionSteps1766800000000 implements MigrationInterface {
  name = 'HitsBySessionSteps1766800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE hits
      DROP KEY ix_hits_site_session,
      ADD KEY ix_hits_site_session (site_id, session_id, ts, seq, type, step_key)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE hits
      DROP KEY ix_hits_site_session,
      ADD KEY ix_hits_site_session (site_id, session_id, ts, seq)`);
  }
}
