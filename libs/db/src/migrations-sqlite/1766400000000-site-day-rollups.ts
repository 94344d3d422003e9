import { MigrationInterface, QueryRunner } from 'typeorm';
import { refillDayRollups } from '../migrations/site-day-rollups';

/** The SQLite form of MariaDB's SiteDayRollups1766400000000 (libs/db/src/migrations): the same SQL. */
export class SqliteSiteDayRollups1766400000000 implements MigrationInterface {
  name = 'SqliteSiteDayRollups1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await refillDayRollups(q, (siteZone) => siteZone);
  }

  async down(q: QueryRunner): Promise<void> {
    await refillDayRollups(q, () => 'UTC');
  }
}
