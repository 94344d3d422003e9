import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Conversions by rollup (SPEC §1 "Conversion"): which goals each derived session converted
 * (`session_goals`), and by 15-minute UTC bucket of the session start the sessions that
 * converted each goal (`goal_rollups`) and any goal, by session attribute
 * (`converted_rollups`). `rolled_up_goals` names the goals they were built for: a report
 * reads them only while that is the site's goal set. The tables start empty: the next
 * `aggregate` builds them for every site's goals, as it does after a goal is created.
 */
export class GoalRollups1765500000000 implements MigrationInterface {
  name = 'GoalRollups1765500000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const collation = dialectForServerVersion(v).exactCollation;
    await q.query(`CREATE TABLE session_goals (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      goal_id INT UNSIGNED NOT NULL,
      PRIMARY KEY (site_id, session_id, goal_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    await q.query(`CREATE TABLE goal_rollups (
      site_id INT UNSIGNED NOT NULL,
      goal_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, goal_id, bucket)
    ) ENGINE=InnoDB`);
    await q.query(`CREATE TABLE converted_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`);
    await q.query(`CREATE TABLE rolled_up_goals (
      site_id INT UNSIGNED NOT NULL,
      goal_id INT UNSIGNED NOT NULL,
      PRIMARY KEY (site_id, goal_id)
    ) ENGINE=InnoDB`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['rolled_up_goals', 'converted_rollups', 'goal_rollups', 'session_goals']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
