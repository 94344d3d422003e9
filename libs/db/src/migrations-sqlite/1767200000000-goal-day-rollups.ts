import { MigrationInterface, QueryRunner } from 'typeorm';
import { GOAL_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's GoalDayRollups1767200000000 (libs/db/src/migrations). */
export class SqliteGoalDayRollups1767200000000 implements MigrationInterface {
  name = 'SqliteGoalDayRollups1767200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE goal_day_rollups (
      site_id INTEGER NOT NULL,
      goal_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, goal_id, bucket)
    ) WITHOUT ROWID`);
    await refillDayRollups(q, { dialect, rollups: [GOAL_DAY_ROLLUP], sites: 'every site' });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE goal_day_rollups');
  }
}
