import { localDayStart, nextLocalDayStart } from '@app/stats/date-range';
import type { QueryRunner } from 'typeorm';
import { fromStoredDatetime } from '../sqlite/datetimes';

/** The day rollups and the 15-minute rollups they are the sums of, with their columns. */
const DAY_ROLLUPS = [
  {
    day: 'session_day_rollups',
    quarter: 'session_rollups',
    keys: ['dimension', 'value'],
    texts: [],
    sums: ['sessions', 'bounces', 'session_pageviews', 'duration_seconds'],
  },
  {
    day: 'session_path_day_rollups',
    quarter: 'session_path_rollups',
    keys: ['dimension', 'path_hash'],
    texts: ['path'],
    sums: ['sessions'],
  },
  {
    day: 'session_attribute_day_rollups',
    quarter: 'session_attribute_rollups',
    keys: ['attributes_hash'],
    texts: ['channel', 'source', 'country', 'device', 'browser'],
    sums: ['sessions', 'bounces', 'session_pageviews', 'duration_seconds'],
  },
] as const;

const DAYS_PER_STATEMENT = 500;

/**
 * Re-fills the session day rollups of every site whose time zone is not UTC from their
 * 15-minute rows, by the local days of `zoneOf(site's zone)`: the site's own (up), or UTC
 * (down). Portable SQL (MariaDB and SQLite): the days are computed here, with the same function
 * `aggregate` buckets by (localDayStart), into a temporary table that the sums join.
 */
export async function refillDayRollups(q: QueryRunner, zoneOf: (siteZone: string) => string): Promise<void> {
  const spans = (await q.query(
    `SELECT s.id AS site_id, s.timezone AS timezone, MIN(r.bucket) AS first, MAX(r.bucket) AS last
     FROM sites s JOIN session_rollups r ON r.site_id = s.id
     WHERE s.timezone <> 'UTC' GROUP BY s.id, s.timezone`,
  )) as Array<{ site_id: number; timezone: string; first: Date | string; last: Date | string }>;
  if (spans.length === 0) return;
  await q.query(
    'CREATE TEMPORARY TABLE site_days (site_id INT NOT NULL, day_start DATETIME NOT NULL, day_end DATETIME NOT NULL, PRIMARY KEY (site_id, day_start))',
  );
  try {
    for (const span of spans) {
      const zone = zoneOf(span.timezone);
      const last = asDate(span.last);
      const days: unknown[][] = [];
      for (let day = localDayStart(asDate(span.first), zone); day <= last;) {
        const next = nextLocalDayStart(day, zone);
        days.push([Number(span.site_id), day, next]);
        day = next;
      }
      for (let i = 0; i < days.length; i += DAYS_PER_STATEMENT) {
        const part = days.slice(i, i + DAYS_PER_STATEMENT);
        await q.query(
          `INSERT INTO site_days (site_id, day_start, day_end) VALUES ${part.map(() => '(?, ?, ?)').join(', ')}`,
          part.flat(),
        );
      }
    }
    const sites = spans.map((s) => Number(s.site_id));
    for (const t of DAY_ROLLUPS) {
      await q.query(`DELETE FROM ${t.day} WHERE site_id IN (${sites.map(() => '?').join(', ')})`, sites);
      const keys = t.keys.map((k) => `r.${k}`);
      await q.query(
        `INSERT INTO ${t.day} (site_id, bucket, ${[...t.keys, ...t.texts, ...t.sums].join(', ')})
         SELECT r.site_id, d.day_start, ${[...keys, ...t.texts.map((c) => `MIN(r.${c})`), ...t.sums.map((c) => `SUM(r.${c})`)].join(', ')}
         FROM ${t.quarter} r JOIN site_days d
           ON d.site_id = r.site_id AND r.bucket >= d.day_start AND r.bucket < d.day_end
         GROUP BY r.site_id, d.day_start, ${keys.join(', ')}`,
      );
    }
  } finally {
    await q.query('DROP TABLE site_days');
  }
}

/** A DATETIME as MariaDB (Date) or SQLite (its stored text, from an aggregate) gives it. */
function asDate(value: Date | string): Date {
  return typeof value === 'string' ? fromStoredDatetime(value) : value;
}
