import { priorVisitsUpdate, SESSION_PAGES } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * `session_pages.prior_visit_at`: the start of the visitor's session before the row's that has a
 * row under the same page_key (NULL for its first there; priorVisitsUpdate). Of a page's rows in a
 * range, those without a prior visit in the range are one a visitor, so under `page==` one path
 * the overview's visitors and engagement's returning split count rows instead of distinct visitor
 * ids: at 10M pageviews under `page==/pricing`, 657k distinct ids, 1.1 of engagement's 1.35 s
 * (BENCHMARKS.md runs BS, BT). `aggregate` sets it again on every row of the visitors of a chunk's
 * sessions (SessionAggregator.linkPriorVisits). Filled by the same statement over every row.
 */
export class SessionPagePriorVisits1769100000000 implements MigrationInterface {
  name = 'SessionPagePriorVisits1769100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN prior_visit_at DATETIME(3) NULL`);
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const update = priorVisitsUpdate(dialectForServerVersion(v));
    await q.query(update.sql, [...update.parameters]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN prior_visit_at`);
  }
}
