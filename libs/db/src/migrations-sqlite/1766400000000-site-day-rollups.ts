import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillDayRollups, SESSION_BUCKET_DAY_ROLLUPS } from '../migrations/site-day-rollups';

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
    await refillDayRollups(q, (siteZone) => siteZone);
    await refillDayRollups(q, (siteZone) => siteZone, SESSION_BUCKET_DAY_ROLLUPS, 'every zone');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE revenue_day_rollups');
    await q.query('DROP TABLE pageview_day_rollups');
    await refillDayRollups(q, () => 'UTC');
  }
}
