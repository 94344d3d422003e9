import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  CONVERTED_DAY_ROLLUP,
  refillDayRollups,
  SESSION_BUCKET_DAY_ROLLUPS,
} from '@app/stats/rollups/day-refill';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/** The SQLite form of MariaDB's SiteDayRollups1766400000000 (libs/db/src/migrations). */
export class SqliteSiteDayRollups1766400000000 implements MigrationInterface {
  name = 'SqliteSiteDayRollups1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE pageview_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      pageviews INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE revenue_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      orders INTEGER NOT NULL,
      revenue INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await q.query(`CREATE TABLE converted_day_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    await refillDayRollups(q, { dialect });
    await refillDayRollups(q, {
      dialect,
      rollups: [...SESSION_BUCKET_DAY_ROLLUPS, CONVERTED_DAY_ROLLUP],
      sites: 'every site',
    });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE converted_day_rollups');
    await q.query('DROP TABLE revenue_day_rollups');
    await q.query('DROP TABLE pageview_day_rollups');
    await refillDayRollups(q, { dialect, zoneOf: () => 'UTC' });
  }
}
