import { GOAL_ATTRIBUTE_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';
import { fillGoalAttributeRollups } from '@app/stats/rollups/goal-rollup';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's GoalAttributeRollups1767600000000 (libs/db/src/migrations). */
export class SqliteGoalAttributeRollups1767600000000 implements MigrationInterface {
  name = 'SqliteGoalAttributeRollups1767600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['goal_attribute_rollups', 'goal_attribute_day_rollups']) {
      await q.query(`CREATE TABLE ${table} (
        site_id INTEGER NOT NULL,
        goal_id INTEGER NOT NULL,
        bucket DATETIME NOT NULL,
        attributes_hash BLOB NOT NULL,
        channel TEXT NOT NULL,
        source TEXT NOT NULL,
        country TEXT NOT NULL,
        device TEXT NOT NULL,
        browser TEXT NOT NULL,
        sessions INTEGER NOT NULL,
        PRIMARY KEY (site_id, goal_id, bucket, attributes_hash)
      ) WITHOUT ROWID`);
    }
    await fillGoalAttributeRollups(q, dialect);
    await refillDayRollups(q, { dialect, rollups: [GOAL_ATTRIBUTE_DAY_ROLLUP], sites: 'every site' });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE goal_attribute_day_rollups');
    await q.query('DROP TABLE goal_attribute_rollups');
  }
}
