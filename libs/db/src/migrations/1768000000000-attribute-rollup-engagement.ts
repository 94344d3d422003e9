import { ATTRIBUTE_DAY_ROLLUP, refillDayRollups } from '@app/stats/rollups/day-refill';
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
 * (SESSION_ENGAGEMENT_COLUMNS), read from the sessions table by the combination's key
 * (`sessions.attributes_hash`) and the quarter hour of the start: the sums `aggregate` keeps.
 */
export function fillAttributeEngagementSql(d: SqlDialect): string {
  const bucket = d.floorToQuarterHour('s.started_at');
  const sums = SESSION_ENGAGEMENT_COLUMNS.map((c) => `SUM(s.${c}) AS ${c}`).join(', ');
  const rows = `SELECT s.site_id, ${bucket} AS bucket, s.attributes_hash, ${sums}
    FROM sessions s GROUP BY s.site_id, ${bucket}, s.attributes_hash`;
  const on = 'e.site_id = r.site_id AND e.bucket = r.bucket AND e.attributes_hash = r.attributes_hash';
  return d.name === 'sqlite'
    ? `UPDATE session_attribute_rollups AS r SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `${c} = e.${c}`).join(', ')}
       FROM (${rows}) e WHERE ${on}`
    : `UPDATE session_attribute_rollups r JOIN (${rows}) e ON ${on}
       SET ${SESSION_ENGAGEMENT_COLUMNS.map((c) => `r.${c} = e.${c}`).join(', ')}`;
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
    await q.query(fillAttributeEngagementSql(d));
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
