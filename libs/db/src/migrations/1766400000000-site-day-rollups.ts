import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion, SqlDialect } from '../dialect';
import {
  CONVERTED_DAY_ROLLUP,
  refillDayRollups,
  SESSION_BUCKET_DAY_ROLLUPS,
} from '@app/stats/rollups/day-refill';

/**
 * Day rows by the site's local day. The session day rollups (session_day_rollups,
 * session_path_day_rollups, session_attribute_day_rollups) were by UTC day; they are now by the
 * site's day, and pageviews, revenue and converted sessions by session attribute get day
 * rollups of their own (pageview_day_rollups, revenue_day_rollups, converted_day_rollups, as
 * pageview_rollups, revenue_rollups and converted_rollups). A report
 * in the site's zone (the default) is then whole day rows: a 30-day overview of a site in New
 * York no longer reads the 96 quarter hours of 15-minute rows around 29 UTC days, and a
 * breakdown by day, week or month reads one row per day and value instead of 96. A day row's
 * bucket is the UTC instant its local day starts at. Sites in UTC keep their session day rows
 * (their days are the same); the others' are summed again from their 15-minute rows, and the
 * new tables from theirs.
 */
export class SiteDayRollups1766400000000 implements MigrationInterface {
  name = 'SiteDayRollups1766400000000';

  async up(q: QueryRunner): Promise<void> {
    const dialect = await serverDialect(q);
    const table = `ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`;
    await q.query(`CREATE TABLE pageview_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      pageviews INT NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ${table}`);
    await q.query(`CREATE TABLE revenue_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      orders INT NOT NULL,
      revenue DECIMAL(20,2) NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ${table}`);
    await q.query(`CREATE TABLE converted_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      dimension ENUM('channel','source','country','device','browser') NOT NULL,
      bucket DATETIME NOT NULL,
      value VARCHAR(255) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) ${table}`);
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
    await refillDayRollups(q, { dialect: await serverDialect(q), zoneOf: () => 'UTC' });
  }
}

async function serverDialect(q: QueryRunner): Promise<SqlDialect> {
  const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
  return dialectForServerVersion(v);
}
