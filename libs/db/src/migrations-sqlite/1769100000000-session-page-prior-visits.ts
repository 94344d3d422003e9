import { priorVisitsUpdate, SESSION_PAGES } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's SessionPagePriorVisits1769100000000 (libs/db/src/migrations): the
 * same column, filled by the same statement (`UPDATE … FROM`).
 */
export class SqliteSessionPagePriorVisits1769100000000 implements MigrationInterface {
  name = 'SqliteSessionPagePriorVisits1769100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN prior_visit_at DATETIME NULL`);
    const update = priorVisitsUpdate(sqliteDialect);
    await q.query(update.sql, [...update.parameters]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN prior_visit_at`);
  }
}
