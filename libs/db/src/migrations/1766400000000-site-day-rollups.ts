import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillDayRollups } from './site-day-rollups';

/**
 * The session day rollups (session_day_rollups, session_path_day_rollups,
 * session_attribute_day_rollups) by the site's local day instead of the UTC day. A report in the
 * site's zone (the default) is then whole day rows: a 30-day overview of a site in New York no
 * longer reads the 96 quarter hours of 15-minute rows around 29 UTC days, and a breakdown by
 * day, week or month reads one row per day and value instead of 96. A day row's bucket is the
 * UTC instant its local day starts at. Sites in UTC keep their rows (their days are the same);
 * the others' are summed again from their 15-minute rows.
 */
export class SiteDayRollups1766400000000 implements MigrationInterface {
  name = 'SiteDayRollups1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await refillDayRollups(q, (siteZone) => siteZone);
  }

  async down(q: QueryRunner): Promise<void> {
    await refillDayRollups(q, () => 'UTC');
  }
}
