import { MigrationInterface, QueryRunner } from 'typeorm';
import { REPEAT_INDEX } from '../migrations/1768300000000-sessions-by-repeat';

/** The SQLite form of MariaDB's SessionsByRepeat1768300000000 (libs/db/src/migrations). */
export class SqliteSessionsByRepeat1768300000000 implements MigrationInterface {
  name = 'SqliteSessionsByRepeat1768300000000';

  async up(q: QueryRunner): Promise<void> {
    // Datetimes are stored as text of one form: text order is time order.
    await q.query(
      'ALTER TABLE sessions ADD COLUMN is_repeat INTEGER AS (visitor_first_at < started_at) VIRTUAL',
    );
    await q.query(`CREATE INDEX ix_sessions_site_repeat ON sessions (${REPEAT_INDEX.join(', ')})`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX ix_sessions_site_repeat');
    await q.query('ALTER TABLE sessions DROP COLUMN is_repeat');
  }
}
