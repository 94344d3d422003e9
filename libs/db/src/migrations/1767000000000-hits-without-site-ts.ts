import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `hits` loses (site_id, ts). Every import pays for each index of `hits` on every row, and
 * this one had no reader left that (site_id, type, ts) cannot serve: realtime reads its
 * all-types window as the three type ranges of that index (where.liveHits), and the reports
 * read hits by session, step or visitor. At 1M hits (BENCHMARKS.md run AI) its upkeep was
 * ~2–4 s of the server's ~36 s of CPU for an import into empty tables.
 */
export class HitsWithoutSiteTs1767000000000 implements MigrationInterface {
  name = 'HitsWithoutSiteTs1767000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE hits DROP KEY ix_hits_site_ts');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE hits ADD KEY ix_hits_site_ts (site_id, ts)');
  }
}
