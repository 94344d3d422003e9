import { SESSION_PAGES, SESSION_PAGES_BY_VISITOR } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `session_pages` by visitor (SESSION_PAGES_BY_VISITOR): each visitor's rows of one page_key in
 * the order of their prior visits, with the prior visit itself, so that `aggregate` links a chunk's
 * visitors' prior visits again (priorVisitsUpdate) from this index alone, instead of finding each
 * visitor's sessions in `sessions` and reading each of their rows by key: at 10M pageviews that
 * statement took 5.16 s of one more hour's 20.67 s (BENCHMARKS.md run CC). Built in place, the
 * table readable and writable meanwhile.
 */
export class SessionPagesByVisitor1769300000000 implements MigrationInterface {
  name = 'SessionPagesByVisitor1769300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE ${SESSION_PAGES} ADD INDEX ${SESSION_PAGES_BY_VISITOR} (site_id, visitor_id, page_key, started_at, session_id, prior_visit_at), ALGORITHM=INPLACE, LOCK=NONE`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP INDEX ${SESSION_PAGES_BY_VISITOR}`);
  }
}
