import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';
import { refillPairDayRollups } from '@app/stats/rollups/day-refill';

/**
 * The pair rollup (pairRollupDeltas): per site, session attribute and value, listed dimension
 * (another attribute of the overview's lists, the entry page or the exit page), site day of the session start and
 * item, the sessions. The overview's top lists under conditions on one attribute read the
 * sessions of the values those select from it: at 10M pageviews the entry and exit pages
 * under `country==US` read the range's 3M sessions (2.66 s each), the other attribute lists
 * ~400k rows of session_attribute_day_rollups. Keyed so that one attribute's values of one
 * list are one range of the key; `aggregate` keeps it from the same before/after rows as the
 * other session rollups; this fills it from the sessions that exist.
 */
export class SessionPairDayRollups1766700000000 implements MigrationInterface {
  name = 'SessionPairDayRollups1766700000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(`CREATE TABLE session_pair_day_rollups (
      site_id INT UNSIGNED NOT NULL,
      attribute ENUM('channel','source','country','device','browser') NOT NULL,
      dimension ENUM('channel','source','country','device','entry_path','exit_path') NOT NULL,
      value VARCHAR(255) NOT NULL,
      bucket DATETIME NOT NULL,
      item_hash BINARY(16) NOT NULL,
      item VARCHAR(2048) NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, attribute, dimension, value, bucket, item_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await refillPairDayRollups(q, { dialect });
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE session_pair_day_rollups');
  }
}
