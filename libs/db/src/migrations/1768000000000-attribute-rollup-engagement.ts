import { ATTRIBUTE_DAY_ROLLUP, Queryable, refillDayRollups } from '@app/stats/rollups/day-refill';
import { SESSION_ENGAGEMENT_COLUMNS } from '@app/stats/sql/session-engagement';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion, SqlDialect } from '../dialect';

/** The attribute rollup's two grains. */
export const ATTRIBUTE_ROLLUP_TABLES = [
  'session_attribute_rollups',
  'session_attribute_day_rollups',
] as const;

/**
 * The 15-minute rows of the attribute rollup filled with their sessions' engagement sums
 * (SESSION_ENGAGEMENT_COLUMNS): the sessions' sums by site, quarter hour of the start and
 * combination (`sessions.attributes_hash`) into a temporary table keyed like the rollup, then
 * each rollup row's from there by key: the sums `aggregate` keeps. Joined to the grouped
 * sessions directly, MariaDB 10.11 grouped a combination's sessions again for each of its rows
 * (a LATERAL DERIVED read, keyed by site and combination only): past 10 minutes at 10M
 * pageviews (2.07M rows, 3.28M sessions).
 */
export async function fillAttributeEngagement(q: Queryable, d: SqlDialect): Promise<void> {
  const sqlite = d.name === 'sqlite';
  const types = sqlite
    ? { hash: 'BLOB', count: 'INTEGER', seconds: 'INTEGER' }
    : { hash: 'BINARY(16)', count: 'BIGINT', seconds: 'DECIMAL(20,3)' };
  await q.query(
    `CREATE TEMPORARY TABLE attribute_engagement (
      site_id INT NOT NULL, bucket DATETIME NOT NULL, attributes_hash ${types.hash} NOT NULL,
      ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `${c} ${c === 'time_on_page_seconds' ? types.seconds : types.count} NOT NULL`).join(', ')},
      PRIMARY KEY (site_id, bucket, attributes_hash))`,
  );
  try {
    const bucket = d.floorToQuarterHour('s.started_at');
    await q.query(
      `INSERT INTO attribute_engagement (site_id, bucket, attributes_hash, ${SESSION_ENGAGEMENT_COLUMNS.join(', ')})
       SELECT s.site_id, ${bucket}, s.attributes_hash, ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `SUM(s.${c})`).join(', ')}
       FROM sessions s GROUP BY s.site_id, ${bucket}, s.attributes_hash`,
    );
    const on = 'e.site_id = r.site_id AND e.bucket = r.bucket AND e.attributes_hash = r.attributes_hash';
    await q.query(
      sqlite
        ? `UPDATE session_attribute_rollups AS r SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `${c} = e.${c}`).join(', ')}
           FROM attribute_engagement e WHERE ${on}`
        : `UPDATE session_attribute_rollups r JOIN attribute_engagement e ON ${on}
           SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `r.${c} = e.${c}`).join(', ')}`,
    );
  } finally {
    await q.query(
      sqlite ? 'DROP TABLE temp.attribute_engagement' : 'DROP TEMPORARY TABLE attribute_engagement',
    );
  }
}

/**
 * The sessions' engagement sums in the attribute rollup (both grains): pageviews with a time
 * on page, their sum and pageviews per scroll-depth bucket, as each derived session keeps them
 * since migration 1767800000000. Under conditions on several attributes, engagement's time on
 * page and scroll depth then read a whole session's sums from the selected combinations' rows
 * of the range, as its pageviews are (pageviewEngagementBySession), instead of each selected
 * session's row. `aggregate` keeps them with the other sums; this fills them from the sessions.
 */
export class AttributeRollupEngagement1768000000000 implements MigrationInterface {
  name = 'AttributeRollupEngagement1768000000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const d = dialectForServerVersion(v);
    // Counts signed, as the other sums of the rollup (a delta subtracts); seconds as hit_rollups keeps them.
    const type = (c: string) => (c === 'time_on_page_seconds' ? 'DECIMAL(20,3)' : 'BIGINT');
    for (const table of ATTRIBUTE_ROLLUP_TABLES) {
      await q.query(
        `ALTER TABLE ${table} ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `ADD COLUMN ${c} ${type(c)} NOT NULL DEFAULT 0`).join(', ')}`,
      );
    }
    await fillAttributeEngagement(q, d);
    await refillDayRollups(q, { dialect: d, rollups: [ATTRIBUTE_DAY_ROLLUP], sites: 'every site' });
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ATTRIBUTE_ROLLUP_TABLES) {
      await q.query(
        `ALTER TABLE ${table} ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `DROP COLUMN ${c}`).join(', ')}`,
      );
    }
  }
}
