import { SESSION_PAGE_COLUMNS, SESSION_PAGES, sessionPagesInsert } from '@app/stats/sql/session-pages';
import { sql } from 'kysely';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's SessionPagePriors1768800000000 (libs/db/src/migrations). */
export class SqliteSessionPagePriors1768800000000 implements MigrationInterface {
  name = 'SqliteSessionPagePriors1768800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN prior_page_key TEXT NULL`);
    await q.query(`DELETE FROM ${SESSION_PAGES}`);
    const insert = sessionPagesInsert(sql`1 = 1`, SESSION_PAGE_COLUMNS).compile(dialect.builder);
    await q.query(insert.sql, [...insert.parameters]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN prior_page_key`);
  }
}
