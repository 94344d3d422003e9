import { ATTRIBUTE_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';
import { SESSION_ENGAGEMENT_COLUMNS } from '@app/stats/sql/session-engagement';
import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  ATTRIBUTE_ROLLUP_TABLES,
  fillAttributeEngagement,
} from '../migrations/1768000000000-attribute-rollup-engagement';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's AttributeRollupEngagement1768000000000 (libs/db/src/migrations):
 * the same columns (the time on page in milliseconds, as every SQLite seconds column), filled by
 * `UPDATE … FROM`.
 */
export class SqliteAttributeRollupEngagement1768000000000 implements MigrationInterface {
  name = 'SqliteAttributeRollupEngagement1768000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ATTRIBUTE_ROLLUP_TABLES) {
      for (const column of SESSION_ENGAGEMENT_COLUMNS) {
        await q.query(`ALTER TABLE ${table} ADD COLUMN ${column} INTEGER NOT NULL DEFAULT 0`);
      }
    }
    await fillAttributeEngagement(q, dialect);
    await refillDayRollups(q, { dialect, rollups: [ATTRIBUTE_DAY_ROLLUP], sites: 'every site' });
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ATTRIBUTE_ROLLUP_TABLES) {
      for (const column of SESSION_ENGAGEMENT_COLUMNS) {
        await q.query(`ALTER TABLE ${table} DROP COLUMN ${column}`);
      }
    }
  }
}
