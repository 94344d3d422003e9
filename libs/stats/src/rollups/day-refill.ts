import type { SqlDialect } from '@app/db/dialect';
import { fromStoredDatetime } from '@app/db/sqlite/datetimes';
import { localDayNumber, localDayNumberStart, localDayStart, nextLocalDayStart } from '../date-range';
import { DAY_SPANS } from './day-split';
import { SESSION_ENGAGEMENT_COLUMNS } from '../sql/session-engagement';
import {
  COMBINATION_PATH_ROLLUP,
  combinationPathRollupDeltas,
  CombinationPathRollupDelta,
  combinationPathRowKey,
  localDayBucket,
  PAIR_ROLLUP,
  pairRollupDeltas,
  PairRollupDelta,
  pairRowKey,
  RolledUpSession,
} from './session-rollup';

/** A QueryRunner (migrations) or an EntityManager (aggregate, in its transaction). */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** A day rollup and the 15-minute rollup it is the sums of, with their columns. */
export interface DayRollup {
  day: string;
  quarter: string;
  /** Key columns after site_id and bucket. */
  keys: readonly string[];
  /** Columns that follow the key (one value per key). */
  texts: readonly string[];
  sums: readonly string[];
}

/**
 * The session day rollups: by UTC day until migration 1766400000000. Their columns as they were
 * then, which that migration refills (CURRENT_SESSION_DAY_ROLLUPS for today's).
 */
export const SESSION_DAY_ROLLUPS: readonly DayRollup[] = [
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
];

/**
 * session_attribute_day_rollups since migration 1768000000000: with the sessions' engagement
 * sums (SESSION_ENGAGEMENT_COLUMNS), which that migration fills.
 */
export const ATTRIBUTE_DAY_ROLLUP: DayRollup = {
  ...SESSION_DAY_ROLLUPS[2],
  sums: [...SESSION_DAY_ROLLUPS[2].sums, ...SESSION_ENGAGEMENT_COLUMNS],
};

/** The session day rollups as the latest migration leaves them (SESSION_DAY_ROLLUPS otherwise). */
export const CURRENT_SESSION_DAY_ROLLUPS: readonly DayRollup[] = [
  SESSION_DAY_ROLLUPS[0],
  SESSION_DAY_ROLLUPS[1],
  ATTRIBUTE_DAY_ROLLUP,
];

/** The session-bucket day rollups, created by migration 1766400000000. */
export const SESSION_BUCKET_DAY_ROLLUPS: readonly DayRollup[] = [
  {
    day: 'pageview_day_rollups',
    quarter: 'pageview_rollups',
    keys: ['dimension', 'value'],
    texts: [],
    sums: ['pageviews'],
  },
  {
    day: 'revenue_day_rollups',
    quarter: 'revenue_rollups',
    keys: ['dimension', 'value'],
    texts: [],
    sums: ['orders', 'revenue'],
  },
];

/** Converted sessions by attribute by the site's day, created by migration 1766400000000. */
export const CONVERTED_DAY_ROLLUP: DayRollup = {
  day: 'converted_day_rollups',
  quarter: 'converted_rollups',
  keys: ['dimension', 'value'],
  texts: [],
  sums: ['sessions'],
};

/** Sessions that converted each goal by the site's day, created by migration 1767200000000. */
export const GOAL_DAY_ROLLUP: DayRollup = {
  day: 'goal_day_rollups',
  quarter: 'goal_rollups',
  keys: ['goal_id'],
  texts: [],
  sums: ['sessions'],
};

/**
 * Sessions that converted each goal and any goal by combination of the five attributes, by
 * the site's day, created by migration 1767600000000.
 */
export const GOAL_ATTRIBUTE_DAY_ROLLUP: DayRollup = {
  day: 'goal_attribute_day_rollups',
  quarter: 'goal_attribute_rollups',
  keys: ['goal_id', 'attributes_hash'],
  texts: ['channel', 'source', 'country', 'device', 'browser'],
  sums: ['sessions'],
};

const DAYS_PER_STATEMENT = 500;

/**
 * Re-fills day rollups from their 15-minute rows, by the local days of `zoneOf(site's zone)`:
 * the site's own, or UTC (the down of migration 1766400000000); for every site, one site (a
 * rollup rebuilt in SQL by `aggregate`), or only the sites whose zone is not UTC (their UTC-day
 * rows are already their site-day rows). Portable SQL (MariaDB and SQLite): the days are
 * computed here, with the function `aggregate` buckets by (localDayStart), into a temporary
 * table that the sums join.
 */
export async function refillDayRollups(
  q: Queryable,
  {
    dialect,
    zoneOf = (siteZone) => siteZone,
    rollups = SESSION_DAY_ROLLUPS,
    sites = 'sites not in UTC',
  }: {
    dialect: SqlDialect;
    zoneOf?: (siteZone: string) => string;
    rollups?: readonly DayRollup[];
    sites?: 'every site' | 'sites not in UTC' | { id: number };
  },
): Promise<void> {
  const which =
    sites === 'every site'
      ? ''
      : sites === 'sites not in UTC'
        ? "WHERE s.timezone <> 'UTC'"
        : 'WHERE s.id = ?';
  // Each site's span of 15-minute rows in these rollups: its days cover every row.
  const spans = (await q.query(
    `SELECT s.id AS site_id, s.timezone AS timezone, MIN(r.bucket) AS first, MAX(r.bucket) AS last
     FROM sites s JOIN (${rollups.map((t) => `SELECT site_id, bucket FROM ${t.quarter}`).join(' UNION ALL ')}) r
       ON r.site_id = s.id
     ${which} GROUP BY s.id, s.timezone`,
    typeof sites === 'object' ? [sites.id] : [],
  )) as SiteSpan[];
  if (typeof sites === 'object') {
    // A site with no rows left keeps no day rows either.
    for (const t of rollups) await q.query(`DELETE FROM ${t.day} WHERE site_id = ?`, [sites.id]);
  }
  if (spans.length === 0) return;
  const siteIds = spans.map((span) => Number(span.site_id));
  await withSiteDays(q, dialect, spans, zoneOf, async () => {
    for (const t of rollups) {
      await q.query(`DELETE FROM ${t.day} WHERE site_id IN (${siteIds.map(() => '?').join(', ')})`, siteIds);
      const keys = t.keys.map((k) => `r.${k}`);
      await q.query(
        `INSERT INTO ${t.day} (site_id, bucket, ${[...t.keys, ...t.texts, ...t.sums].join(', ')})
         SELECT r.site_id, d.day_start, ${[...keys, ...t.texts.map((c) => `MIN(r.${c})`), ...t.sums.map((c) => `SUM(r.${c})`)].join(', ')}
         FROM ${t.quarter} r JOIN site_days d
           ON d.site_id = r.site_id AND r.bucket >= d.day_start AND r.bucket < d.day_end
         GROUP BY r.site_id, d.day_start, ${keys.join(', ')}`,
      );
    }
  });
}

/**
 * Re-fills event_day_rollups and event_day_links (migration 1766500000000) from event_rollups and
 * event_links, by every site's local day, as eventDayDeltas keeps them: a day's sessions are its
 * buckets' minus the links inside the day, and the links between two days are kept as they are.
 */
export async function refillEventDayRollups(
  q: Queryable,
  { dialect }: { dialect: SqlDialect },
): Promise<void> {
  const spans = (await q.query(
    `SELECT s.id AS site_id, s.timezone AS timezone, MIN(r.bucket) AS first, MAX(r.bucket) AS last
     FROM sites s JOIN event_rollups r ON r.site_id = s.id GROUP BY s.id, s.timezone`,
  )) as SiteSpan[];
  await q.query('DELETE FROM event_day_links');
  await q.query('DELETE FROM event_day_rollups');
  if (spans.length === 0) return;
  await withSiteDays(
    q,
    dialect,
    spans,
    (siteZone) => siteZone,
    async () => {
      await q.query(
        `INSERT INTO event_day_rollups (site_id, bucket, name, occurrences, sessions)
       SELECT x.site_id, x.day_start, x.name, SUM(x.occurrences), SUM(x.sessions) FROM (
         SELECT r.site_id, d.day_start, r.name, r.occurrences, r.sessions
         FROM event_rollups r JOIN site_days d
           ON d.site_id = r.site_id AND r.bucket >= d.day_start AND r.bucket < d.day_end
         UNION ALL
         SELECT l.site_id, d.day_start, l.name, 0, -l.sessions
         FROM event_links l JOIN site_days d
           ON d.site_id = l.site_id AND l.to_bucket >= d.day_start AND l.to_bucket < d.day_end
         WHERE l.from_bucket >= d.day_start
       ) x GROUP BY x.site_id, x.day_start, x.name`,
      );
      await q.query(
        `INSERT INTO event_day_links (site_id, to_bucket, name, from_bucket, sessions)
       SELECT l.site_id, l.to_bucket, l.name, l.from_bucket, l.sessions
       FROM event_links l JOIN site_days d
         ON d.site_id = l.site_id AND l.to_bucket >= d.day_start AND l.to_bucket < d.day_end
       WHERE l.from_bucket < d.day_start`,
      );
    },
  );
}

/** A span rollup (rows by aligned blocks of DAY_SPANS site days) and the day rollup it sums. */
export interface SpanRollup {
  day: string;
  span: string;
  /** Key columns after site_id, span and bucket. */
  keys: readonly string[];
  /** Columns that follow the key (one value per key). */
  texts: readonly string[];
}

/** Entry and exit pages by blocks of days (migration 1766600000000). */
export const PATH_SPAN_ROLLUP: SpanRollup = {
  day: 'session_path_day_rollups',
  span: 'session_path_span_rollups',
  keys: ['dimension', 'path_hash'],
  texts: ['path'],
};

/** Sessions by attribute value by blocks of days (migration 1767300000000). */
export const SESSION_SPAN_ROLLUP: SpanRollup = {
  day: 'session_day_rollups',
  span: 'session_span_rollups',
  keys: ['dimension', 'value'],
  texts: [],
};

/**
 * Re-fills a span rollup from its day rollup's sessions: per site, key and span of DAY_SPANS,
 * the day rows of each block summed (daySpanBucket's blocks), over a TEMPORARY table of the
 * blocks that cover each site's day rows.
 */
export async function refillSpanRollups(
  q: Queryable,
  { dialect, rollup }: { dialect: SqlDialect; rollup: SpanRollup },
): Promise<void> {
  const spans = (await q.query(
    `SELECT s.id AS site_id, s.timezone AS timezone, MIN(r.bucket) AS first, MAX(r.bucket) AS last
     FROM sites s JOIN ${rollup.day} r ON r.site_id = s.id GROUP BY s.id, s.timezone`,
  )) as SiteSpan[];
  await q.query(`DELETE FROM ${rollup.span}`);
  if (spans.length === 0) return;
  await q.query(
    'CREATE TEMPORARY TABLE site_blocks (site_id INT NOT NULL, span INT NOT NULL, block_start DATETIME NOT NULL, block_end DATETIME NOT NULL, PRIMARY KEY (site_id, span, block_start))',
  );
  try {
    for (const site of spans) {
      const first = localDayNumber(asDate(site.first), site.timezone);
      const last = localDayNumber(asDate(site.last), site.timezone);
      const blocks: unknown[][] = [];
      for (const span of DAY_SPANS) {
        for (let day = first - (((first % span) + span) % span); day <= last; day += span) {
          blocks.push([
            Number(site.site_id),
            span,
            localDayNumberStart(day, site.timezone),
            localDayNumberStart(day + span, site.timezone),
          ]);
        }
      }
      for (let i = 0; i < blocks.length; i += DAYS_PER_STATEMENT) {
        const part = blocks.slice(i, i + DAYS_PER_STATEMENT);
        await q.query(
          `INSERT INTO site_blocks (site_id, span, block_start, block_end) VALUES ${part.map(() => '(?, ?, ?, ?)').join(', ')}`,
          part.flat(),
        );
      }
    }
    const keys = rollup.keys.map((k) => `r.${k}`);
    await q.query(
      `INSERT INTO ${rollup.span} (site_id, span, bucket, ${[...rollup.keys, ...rollup.texts, 'sessions'].join(', ')})
       SELECT r.site_id, b.span, b.block_start, ${[...keys, ...rollup.texts.map((t) => `MIN(r.${t})`)].join(', ')}, SUM(r.sessions)
       FROM ${rollup.day} r JOIN site_blocks b
         ON b.site_id = r.site_id AND r.bucket >= b.block_start AND r.bucket < b.block_end
       GROUP BY r.site_id, b.span, b.block_start, ${keys.join(', ')}`,
    );
  } finally {
    await q.query(
      dialect.name === 'sqlite' ? 'DROP TABLE temp.site_blocks' : 'DROP TEMPORARY TABLE site_blocks',
    );
  }
}

interface SiteSpan {
  site_id: number;
  timezone: string;
  first: Date | string;
  last: Date | string;
}

/**
 * Runs `fill` with a TEMPORARY table site_days (site_id, day_start, day_end) holding the local
 * days (of `zoneOf(site's zone)`) that cover each site's span, computed here with the function
 * `aggregate` buckets by (localDayStart).
 */
async function withSiteDays(
  q: Queryable,
  dialect: SqlDialect,
  spans: readonly SiteSpan[],
  zoneOf: (siteZone: string) => string,
  fill: () => Promise<void>,
): Promise<void> {
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
    await fill();
  } finally {
    // TEMPORARY: a plain DROP TABLE would commit aggregate's transaction on MariaDB.
    await q.query(dialect.name === 'sqlite' ? 'DROP TABLE temp.site_days' : 'DROP TEMPORARY TABLE site_days');
  }
}

/** A DATETIME as MariaDB (Date) or SQLite (its stored text, from an aggregate) gives it. */
function asDate(value: Date | string): Date {
  return typeof value === 'string' ? fromStoredDatetime(value) : value;
}

/** Sessions read per statement by refillSessionDayRows. */
const REFILL_PAGE = 5000;
/** Rows per upsert statement of refillSessionDayRows. */
const REFILL_ROWS = 500;

/** A rollup of sessions by site day that `aggregate` keeps from each session's row by deltas. */
interface SessionDayRows<R extends { bucket: Date; sessions: number }> {
  table: string;
  keys: readonly string[];
  identity: readonly string[];
  keyValues: (r: R) => unknown[];
  /** `aggregate`'s deltas, from no rows to `after`. */
  deltas: (before: RolledUpSession[], after: RolledUpSession[], bucketOf: (start: Date) => Date) => R[];
  /** What identifies a row (rows with the same key add up). */
  rowKey: (r: R) => string;
}

const PAIR_DAY_ROWS: SessionDayRows<PairRollupDelta> = {
  ...PAIR_ROLLUP,
  deltas: pairRollupDeltas,
  rowKey: pairRowKey,
};

const COMBINATION_PATH_DAY_ROWS: SessionDayRows<CombinationPathRollupDelta> = {
  ...COMBINATION_PATH_ROLLUP,
  deltas: combinationPathRollupDeltas,
  rowKey: combinationPathRowKey,
};

/**
 * Re-fills session_pair_day_rollups (migration 1766700000000) from the sessions table
 * (refillSessionDayRows).
 */
export const refillPairDayRollups = (q: Queryable, options: RefillOptions): Promise<void> =>
  refillSessionDayRows(q, options, PAIR_DAY_ROWS);

/**
 * Re-fills session_combination_path_day_rollups (migration 1768200000000) from the sessions
 * table (refillSessionDayRows).
 */
export const refillCombinationPathDayRollups = (q: Queryable, options: RefillOptions): Promise<void> =>
  refillSessionDayRows(q, options, COMBINATION_PATH_DAY_ROWS);

interface RefillOptions {
  dialect: SqlDialect;
  /** Sessions read per statement. */
  page?: number;
}

/**
 * Re-fills a rollup of sessions by site day from the sessions table, with the deltas
 * `aggregate` keeps it by (the site's localDayBucket): each site's sessions in order of start,
 * a page at a time, each site day's rows written once the pages have passed it, so memory holds
 * about a day of rows.
 */
async function refillSessionDayRows<R extends { bucket: Date; sessions: number }>(
  q: Queryable,
  { dialect, page: pageSize = REFILL_PAGE }: RefillOptions,
  rollup: SessionDayRows<R>,
): Promise<void> {
  await q.query(`DELETE FROM ${rollup.table}`);
  const sites = (await q.query('SELECT id, timezone FROM sites ORDER BY id')) as Array<{
    id: number;
    timezone: string;
  }>;
  const write = async (siteId: number, rows: readonly R[]) => {
    for (let i = 0; i < rows.length; i += REFILL_ROWS) {
      const part = rows.slice(i, i + REFILL_ROWS);
      await q.query(
        dialect.upsertAdd(rollup.table, ['site_id', ...rollup.keys], ['sessions'], part.length, [
          'site_id',
          ...rollup.identity,
        ]),
        part.flatMap((r) => [siteId, ...rollup.keyValues(r), r.sessions]),
      );
    }
  };
  for (const site of sites) {
    const siteId = Number(site.id);
    const bucketOf = localDayBucket(site.timezone);
    let held: R[] = [];
    let after: { started_at: Date; session_id: string } | undefined;
    for (;;) {
      const page = (await q.query(
        `SELECT session_id, started_at, channel, source, country, device, browser, entry_path, exit_path
         FROM sessions WHERE site_id = ?${after ? ' AND (started_at > ? OR (started_at = ? AND session_id > ?))' : ''}
         ORDER BY started_at, session_id LIMIT ${Number(pageSize)}`,
        after ? [siteId, after.started_at, after.started_at, after.session_id] : [siteId],
      )) as Array<RolledUpSession & { session_id: string }>;
      const ended = page.length < pageSize;
      for (const s of page) s.started_at = asDate(s.started_at);
      const rows = mergeRows(held.concat(rollup.deltas([], page, bucketOf)), rollup.rowKey);
      if (ended) {
        await write(siteId, rows);
        break;
      }
      const last = page[page.length - 1];
      after = { started_at: last.started_at, session_id: last.session_id };
      // The rows of days before the last session's day are complete: no later session starts in them.
      const open = bucketOf(last.started_at).getTime();
      await write(
        siteId,
        rows.filter((r) => r.bucket.getTime() < open),
      );
      held = rows.filter((r) => r.bucket.getTime() >= open);
    }
  }
}

/** Rows with the same key summed into one. */
function mergeRows<R extends { sessions: number }>(rows: readonly R[], rowKey: (r: R) => string): R[] {
  const merged = new Map<string, R>();
  for (const r of rows) {
    const key = rowKey(r);
    const known = merged.get(key);
    if (known) known.sessions += r.sessions;
    else merged.set(key, { ...r });
  }
  return [...merged.values()];
}
