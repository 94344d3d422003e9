import { SESSION_PAGES_BY_SESSION } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's SessionPages1768700000000 (libs/db/src/migrations): the same
 * table, clustered on the same key (WITHOUT ROWID), seconds in milliseconds as in `sessions`.
 * Filled by SqliteSessionPagePriors1768800000000.
 */
export class SqliteSessionPages1768700000000 implements MigrationInterface {
  name = 'SqliteSessionPages1768700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_pages (
      site_id INTEGER NOT NULL,
      page_key TEXT NOT NULL,
      started_at DATETIME NOT NULL,
      session_id TEXT NOT NULL,
      visitor_id TEXT NOT NULL,
      ended_at DATETIME NOT NULL,
      hits INTEGER NOT NULL,
      pageviews INTEGER NOT NULL,
      events INTEGER NOT NULL,
      purchases INTEGER NOT NULL,
      is_bounce INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      entry_path TEXT NULL,
      exit_path TEXT NULL,
      channel TEXT NOT NULL,
      source TEXT NOT NULL,
      country TEXT NOT NULL,
      device TEXT NOT NULL,
      browser TEXT NOT NULL,
      purchased INTEGER NOT NULL,
      timed_pageviews INTEGER NOT NULL,
      time_on_page_seconds INTEGER NOT NULL,
      scroll_0_24 INTEGER NOT NULL,
      scroll_25_49 INTEGER NOT NULL,
      scroll_50_74 INTEGER NOT NULL,
      scroll_75_100 INTEGER NOT NULL,
      entry_hash BLOB AS (${dialect.md5Bytes('entry_path')}) VIRTUAL,
      exit_hash BLOB AS (${dialect.md5Bytes('exit_path')}) VIRTUAL,
      PRIMARY KEY (site_id, page_key, started_at, session_id)
    ) WITHOUT ROWID`);
    await q.query(`CREATE INDEX ${SESSION_PAGES_BY_SESSION} ON session_pages (site_id, session_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_pages');
  }
}
