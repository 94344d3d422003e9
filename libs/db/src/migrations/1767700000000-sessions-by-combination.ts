import { attributeKeySql, fillAttributeCombinations } from '@app/stats/rollups/session-rollup';
import { ATTRIBUTE_DAYS_BY_COMBINATION } from '@app/stats/definitions';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/**
 * Sessions read by their combination of the five attributes:
 *
 * - generated columns of `sessions`: `attributes_hash`, the combination as the attribute
 *   rollups key it (the MD5 of attributeKey), and `entry_hash` / `exit_hash`, the MD5 of the
 *   entry and exit page, as the path rollups key them;
 * - `ix_sessions_site_combination` (site, combination, start, visitor, end, pageviews, entry
 *   and exit hash): what the overview, its visitors and its pageviews read of a session;
 * - `attribute_combinations`: every combination a site's sessions have had, with its five values;
 * - an index of the attribute day rollup by site, combination and day.
 *
 * Under conditions on session attributes, a statement over the raw sessions reads the sessions
 * of the combinations the conditions select (combinationSelected: found among the site's
 * combinations, 85,943 at 10M pageviews), from the index alone, instead of every session of the
 * range read by key and tested one by one: at 10M pageviews the overview under three attribute
 * conditions read the range's 3.1M sessions in four statements (BENCHMARKS.md run BA).
 * `aggregate` adds the combinations of the sessions it derives, in the transaction that writes
 * them; the migration fills the table from the sessions (27.7 s at 10M pageviews).
 */
export class SessionsByCombination1767700000000 implements MigrationInterface {
  name = 'SessionsByCombination1767700000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query(
      `ALTER TABLE sessions ADD COLUMN attributes_hash BINARY(16) AS (UNHEX(MD5(${attributeKeySql(null)}))) VIRTUAL`,
    );
    await q.query(
      `ALTER TABLE sessions ADD COLUMN entry_hash BINARY(16) AS (UNHEX(MD5(entry_path))) VIRTUAL,
       ADD COLUMN exit_hash BINARY(16) AS (UNHEX(MD5(exit_path))) VIRTUAL`,
    );
    await q.query(
      `ALTER TABLE sessions ADD KEY ix_sessions_site_combination
       (site_id, attributes_hash, started_at, visitor_id, ended_at, pageviews, entry_hash, exit_hash)`,
    );
    await q.query(
      `ALTER TABLE session_attribute_day_rollups ADD KEY ${ATTRIBUTE_DAYS_BY_COMBINATION} (site_id, attributes_hash, bucket)`,
    );
    await q.query(`CREATE TABLE attribute_combinations (
      site_id INT UNSIGNED NOT NULL,
      attributes_hash BINARY(16) NOT NULL,
      channel VARCHAR(255) NOT NULL,
      source VARCHAR(255) NOT NULL,
      country VARCHAR(255) NOT NULL,
      device VARCHAR(255) NOT NULL,
      browser VARCHAR(255) NOT NULL,
      PRIMARY KEY (site_id, attributes_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await fillAttributeCombinations(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE attribute_combinations');
    await q.query(`ALTER TABLE session_attribute_day_rollups DROP KEY ${ATTRIBUTE_DAYS_BY_COMBINATION}`);
    await q.query(
      'ALTER TABLE sessions DROP KEY ix_sessions_site_combination, DROP COLUMN exit_hash, DROP COLUMN entry_hash, DROP COLUMN attributes_hash',
    );
  }
}
