import { SESSION_PAGE_COLUMNS, SESSION_PAGES, sessionPagesInsert } from '@app/stats/sql/session-pages';
import { sql } from 'kysely';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * `session_pages.prior_page_key` (libs/stats/src/sql/session-pages.ts): the session's page_key
 * before the row's in key order, NULL for its first. A prefix's paths are one run of that
 * order, so a session's one row under a prefix with no prior key under it counts the session
 * once under `page==` a prefix. The table is emptied and filled again from the derived sessions
 * and their pageviews by the statement `aggregate` writes a session's rows with (at 1M
 * pageviews, 1.04M rows in ~50 s); migration 1768700000000 no longer fills it.
 */
export class SessionPagePriors1768800000000 implements MigrationInterface {
  name = 'SessionPagePriors1768800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} ADD COLUMN prior_page_key VARCHAR(255) NULL`);
    await q.query(`TRUNCATE TABLE ${SESSION_PAGES}`);
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const insert = sessionPagesInsert(sql`1 = 1`, SESSION_PAGE_COLUMNS).compile(
      dialectForServerVersion(v).builder,
    );
    await q.query(insert.sql, [...insert.parameters]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN prior_page_key`);
  }
}
