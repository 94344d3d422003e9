import { SESSION_ENGAGEMENT_COLUMNS, sessionEngagementRows } from '@app/stats/sql/session-engagement';
import { sql } from 'kysely';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { COMBINATION_INDEX, COMBINATION_INDEX_BEFORE } from '../migrations/1767800000000-sessions-engagement';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's SessionsEngagement1767800000000 (libs/db/src/migrations): the
 * same columns (the time on page in milliseconds, as every SQLite seconds column) and index,
 * filled by `UPDATE … FROM`.
 */
export class SqliteSessionsEngagement1767800000000 implements MigrationInterface {
  name = 'SqliteSessionsEngagement1767800000000';

  async up(q: QueryRunner): Promise<void> {
    for (const column of SESSION_ENGAGEMENT_COLUMNS) {
      await q.query(`ALTER TABLE sessions ADD COLUMN ${column} INTEGER NOT NULL DEFAULT 0`);
    }
    await q.query('ALTER TABLE sessions ADD COLUMN visitor_first_at DATETIME NULL');
    const rows = sessionEngagementRows(sql`1 = 1`).compile(dialect.builder).sql;
    await q.query(
      `UPDATE sessions SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `${c} = e.${c}`).join(', ')}
       FROM (${rows}) e WHERE e.site_id = sessions.site_id AND e.session_id = sessions.session_id`,
    );
    await q.query(
      `UPDATE sessions SET visitor_first_at = v.first_session_at
       FROM visitors v WHERE v.site_id = sessions.site_id AND v.visitor_id = sessions.visitor_id`,
    );
    await q.query('DROP INDEX ix_sessions_site_combination');
    await q.query(`CREATE INDEX ix_sessions_site_combination ON sessions (${COMBINATION_INDEX.join(', ')})`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_sessions_site_combination');
    await q.query(
      `CREATE INDEX ix_sessions_site_combination ON sessions (${COMBINATION_INDEX_BEFORE.join(', ')})`,
    );
    for (const column of [...SESSION_ENGAGEMENT_COLUMNS, 'visitor_first_at']) {
      await q.query(`ALTER TABLE sessions DROP COLUMN ${column}`);
    }
  }
}
