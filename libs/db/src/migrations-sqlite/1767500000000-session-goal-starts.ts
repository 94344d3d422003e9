import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQLite form of MariaDB's SessionGoalStarts1767500000000 (libs/db/src/migrations). SQLite
 * adds a NOT NULL column only with a default; every row gets its session's start at once.
 */
export class SqliteSessionGoalStarts1767500000000 implements MigrationInterface {
  name = 'SqliteSessionGoalStarts1767500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM session_goals WHERE NOT EXISTS (
         SELECT 1 FROM sessions s WHERE s.site_id = session_goals.site_id AND s.session_id = session_goals.session_id)`,
    );
    await q.query(
      "ALTER TABLE session_goals ADD COLUMN started_at DATETIME NOT NULL DEFAULT '1970-01-01 00:00:00.000'",
    );
    await q.query(
      `UPDATE session_goals SET started_at = (
         SELECT s.started_at FROM sessions s WHERE s.site_id = session_goals.site_id AND s.session_id = session_goals.session_id)`,
    );
    await q.query('CREATE INDEX ix_session_goals_site_start ON session_goals (site_id, started_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_session_goals_site_start');
    await q.query('ALTER TABLE session_goals DROP COLUMN started_at');
  }
}
