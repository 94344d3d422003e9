import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's hits with their time on page and scroll depth: engagement under filters (SPEC §3)
 * sums those over the pageviews of the selected sessions, read through this index; without
 * the two columns each pageview meant a read of its row. At 10M pageviews, engagement under
 * `source==google;device==mobile` read ~1M rows that way: that statement 3.5-3.6 s, 2.1-2.2 s
 * from the index alone (BENCHMARKS.md run AD; 21 s to build the index there).
 */
export class HitsBySessionEngagement1766900000000 implements MigrationInterface {
  name = 'HitsBySessionEngagement1766900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE hits
      DROP KEY ix_hits_site_session,
      ADD KEY ix_hits_site_session (site_id, session_id, ts, seq, type, step_key, time_on_page_seconds, scroll_depth)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE hits
      DROP KEY ix_hits_site_session,
      ADD KEY ix_hits_site_session (site_id, session_id, ts, seq, type, step_key)`);
  }
}
