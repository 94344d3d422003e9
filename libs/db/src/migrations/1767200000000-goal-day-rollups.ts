import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { GOAL_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';

/**
 * Sessions that converted each goal by the site's local day (`goal_day_rollups`, as
 * `goal_rollups` by 15-minute bucket, and as converted_day_rollups is to converted_rollups).
 * A 30-day conversions report then reads one row per goal and day instead of ~2,900 quarter
 * hours per goal (BENCHMARKS.md run AR). A day row's bucket is the UTC instant its local day
 * starts at; the table is summed here from the 15-minute rows, and `aggregate` keeps both.
 */
export class GoalDayRollups1767200000000 implements MigrationInterface {
  name = 'GoalDayRollups1767200000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    await q.query(`CREATE TABLE goal_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      goal_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, goal_id, bucket)
    ) ENGINE=InnoDB`);
    await refillDayRollups(q, {
      dialect: dialectForServerVersion(v),
      rollups: [GOAL_DAY_ROLLUP],
      sites: 'every site',
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE goal_day_rollups');
  }
}
