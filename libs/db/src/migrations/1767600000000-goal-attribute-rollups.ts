import { GOAL_ATTRIBUTE_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';
import { fillGoalAttributeRollups } from '@app/stats/rollups/goal-rollup';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * The sessions that converted each goal, and any goal (goal id 0), by 15-minute UTC bucket of
 * the session start and combination of the five session attributes (`goal_attribute_rollups`),
 * and by the site's day (`goal_attribute_day_rollups`): conversions and the breakdown's
 * conv_rate under conditions on session attributes read them as the attribute rollup answers
 * the sessions, where they read each converted session of the range by key (at 10M pageviews
 * breakdown conv_rate under country==US 779 ms p50, BENCHMARKS.md run AX). Keyed like
 * session_attribute_rollups by the MD5 of the combination. `aggregate` keeps them with the
 * other conversion rollups; the migration fills them from session_goals and the sessions.
 */
export class GoalAttributeRollups1767600000000 implements MigrationInterface {
  name = 'GoalAttributeRollups1767600000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    for (const table of ['goal_attribute_rollups', 'goal_attribute_day_rollups']) {
      await q.query(`CREATE TABLE ${table} (
        site_id INT UNSIGNED NOT NULL,
        goal_id INT UNSIGNED NOT NULL,
        bucket DATETIME NOT NULL,
        attributes_hash BINARY(16) NOT NULL,
        channel VARCHAR(255) NOT NULL,
        source VARCHAR(255) NOT NULL,
        country VARCHAR(255) NOT NULL,
        device VARCHAR(255) NOT NULL,
        browser VARCHAR(255) NOT NULL,
        sessions INT NOT NULL,
        PRIMARY KEY (site_id, goal_id, bucket, attributes_hash)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    }
    await fillGoalAttributeRollups(q, dialect);
    await refillDayRollups(q, { dialect, rollups: [GOAL_ATTRIBUTE_DAY_ROLLUP], sites: 'every site' });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE goal_attribute_day_rollups');
    await q.query('DROP TABLE goal_attribute_rollups');
  }
}
