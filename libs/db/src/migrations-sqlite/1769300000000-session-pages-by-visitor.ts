import { SESSION_PAGES, SESSION_PAGES_BY_VISITOR } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's SessionPagesByVisitor1769300000000 (libs/db/src/migrations). */
export class SqliteSessionPagesByVisitor1769300000000 implements MigrationInterface {
  name = 'SqliteSessionPagesByVisitor1769300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX ${SESSION_PAGES_BY_VISITOR} ON ${SESSION_PAGES} (site_id, visitor_id, page_key, started_at, session_id, prior_visit_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ${SESSION_PAGES_BY_VISITOR}`);
  }
}
