import { SESSION_PAGES } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQLite form of MariaDB's SessionPageFirstSessions1769000000000 (libs/db/src/migrations):
 * the same column, filled by `UPDATE … FROM`.
 */
export class SqliteSessionPageFirstSessions1769000000000 implements MigrationInterface {
  name = 'SqliteSessionPageFirstSessions1769000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN visitor_first_at DATETIME NULL`);
    await q.query(
      `UPDATE ${SESSION_PAGES} SET visitor_first_at = v.first_session_at
       FROM visitors v WHERE v.site_id = ${SESSION_PAGES}.site_id AND v.visitor_id = ${SESSION_PAGES}.visitor_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN visitor_first_at`);
  }
}
