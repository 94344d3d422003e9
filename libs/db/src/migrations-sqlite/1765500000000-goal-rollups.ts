import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's GoalRollups1765500000000 (libs/db/src/migrations). */
export class SqliteGoalRollups1765500000000 implements MigrationInterface {
  name = 'SqliteGoalRollups1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE session_goals (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      goal_id INTEGER NOT NULL,
      PRIMARY KEY (site_id, session_id, goal_id)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE goal_rollups (
      site_id INTEGER NOT NULL,
      goal_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, goal_id, bucket)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE converted_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE rolled_up_goals (
      site_id INTEGER NOT NULL,
      goal_id INTEGER NOT NULL,
      PRIMARY KEY (site_id, goal_id)
    ) WITHOUT ROWID`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['rolled_up_goals', 'converted_rollups', 'goal_rollups', 'session_goals']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
