import type { Queryable } from './day-refill';
import type { SqlDialect } from '@app/db/dialect';
import { localDayStart, nextLocalDayStart, type Bucket, type ReportRange } from '../date-range';
import { hash } from 'node:crypto';
import { SESSION_ATTRIBUTES, SessionAttribute } from '../definitions';
import { DAY_MS } from './visitor-sketch';
import { isSecondsSum, SESSION_ENGAGEMENT_COLUMNS } from '../sql/session-engagement';

/**
 * The session rollup: per site, 15-minute UTC bucket of the session start, session attribute
 * and value, the counts of SPEC §1 over those sessions (never rates). 15 minutes divides every
 * UTC offset in use, so every local day, hour, week and month boundary of a report is a
 * bucket boundary, and a range read from whole buckets is exact in every timezone.
 */
export const ROLLUP_BUCKET_MS = 15 * 60 * 1000;

export const ROLLUP_DIMENSIONS = SESSION_ATTRIBUTES;

/** Entry and exit pages: rolled up apart, keyed by a hash of the path (paths run to 2048 characters). */
export const PATH_DIMENSIONS = ['entry_path', 'exit_path'] as const;
export type PathDimension = (typeof PATH_DIMENSIONS)[number];

/** The sessions-table columns the rollup is computed from. */
export interface RolledUpSession {
  started_at: Date;
  channel: string;
  source: string;
  country: string;
  device: string;
  browser: string;
  entry_path: string | null;
  exit_path: string | null;
  is_bounce: number | string;
  pageviews: number | string;
  duration_seconds: string;
}

/** One rollup row's change: counts, and Σ duration in thousandths of a second (exact). */
export interface RollupDelta {
  bucket: Date;
  dimension: SessionAttribute;
  value: string;
  sessions: number;
  bounces: number;
  sessionPageviews: number;
  durationMillis: bigint;
}

/** The MD5 of a text (UTF-8) that keys a rollup row by a long value (a path, an item, a combination). */
export function md5(text: string): Buffer {
  // crypto.hash: one call instead of a Hash object per value (~1.5× faster on Node 20).
  return hash('md5', text, 'buffer');
}

export function rollupBucket(instant: Date): Date {
  return new Date(Math.floor(instant.getTime() / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS);
}

/** A DECIMAL(…,3) string such as "12.5" or "7.125" as an exact count of thousandths. */
export function toMillis(value: string | number): bigint {
  const text = typeof value === 'number' ? value.toFixed(3) : value;
  const m = /^(-?)(\d+)(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) throw new Error(`not a duration: ${text}`);
  const abs = BigInt(m[2]) * 1000n + BigInt((m[3] ?? '').padEnd(3, '0'));
  return m[1] === '-' ? -abs : abs;
}

/** Thousandths back to a DECIMAL string with 3 decimals. */
export function fromMillis(millis: bigint): string {
  const sign = millis < 0n ? '-' : '';
  const abs = millis < 0n ? -millis : millis;
  return `${sign}${abs / 1000n}.${(abs % 1000n).toString().padStart(3, '0')}`;
}

/** The counts a session adds to every rollup row it belongs to. */
interface SessionCounts {
  sessions: number;
  bounces: number;
  sessionPageviews: number;
  durationMillis: bigint;
}

/**
 * What re-deriving sessions changes in a rollup whose rows `rowsOf` names per session (key
 * and identifying fields): each old row of a session subtracted, each new row added, netted
 * per rollup row. With `engagementOf`, each row also nets the sessions' engagement sums
 * (`engagement`, in its order). Rows whose change is zero are left out.
 */
function netSessionDeltas<R extends object, S extends RolledUpSession = RolledUpSession>(
  before: S[],
  after: S[],
  rowsOf: (s: S, bucket: Date) => Array<{ key: string; row: R }>,
  bucketOf: (start: Date) => Date,
  engagementOf?: (s: S) => bigint[],
): Array<R & SessionCounts & { engagement: bigint[] }> {
  const deltas = new Map<string, R & SessionCounts & { engagement: bigint[] }>();
  const add = (s: S, sign: 1 | -1) => {
    const bucket = bucketOf(s.started_at);
    // The session's counts once, for each of its rows (the pair rollup has up to 26).
    const bounces = sign * Number(s.is_bounce);
    const sessionPageviews = sign * Number(s.pageviews);
    const durationMillis = BigInt(sign) * toMillis(s.duration_seconds);
    const engagement = engagementOf?.(s).map((n) => BigInt(sign) * n) ?? [];
    for (const { key, row } of rowsOf(s, bucket)) {
      const full = `${bucket.getTime()}\u0000${key}`;
      let d = deltas.get(full);
      if (!d) {
        d = {
          ...row,
          sessions: 0,
          bounces: 0,
          sessionPageviews: 0,
          durationMillis: 0n,
          engagement: engagement.map(() => 0n),
        };
        deltas.set(full, d);
      }
      d.sessions += sign;
      d.bounces += bounces;
      d.sessionPageviews += sessionPageviews;
      d.durationMillis += durationMillis;
      engagement.forEach((n, i) => (d.engagement[i] += n));
    }
  };
  before.forEach((s) => add(s, -1));
  after.forEach((s) => add(s, 1));
  return [...deltas.values()].filter(
    (d) =>
      d.sessions !== 0 ||
      d.bounces !== 0 ||
      d.sessionPageviews !== 0 ||
      d.durationMillis !== 0n ||
      d.engagement.some((n) => n !== 0n),
  );
}

/**
 * As netSessionDeltas for a rollup that counts sessions only: `rowsOf` emits each row a session
 * belongs to (`key` identifies it within the bucket; `row` is new, its `sessions` 0), and rows
 * whose count nets to zero are left out.
 */
function netSessionCounts<R extends { sessions: number }>(
  before: RolledUpSession[],
  after: RolledUpSession[],
  rowsOf: (s: RolledUpSession, bucket: Date, emit: (key: string, row: R) => void) => void,
  bucketOf: (start: Date) => Date,
): R[] {
  const deltas = new Map<string, R>();
  let sign: 1 | -1 = -1;
  let at = 0;
  const emit = (key: string, row: R) => {
    const full = `${at}\u0000${key}`;
    let d = deltas.get(full);
    if (!d) {
      d = row;
      deltas.set(full, d);
    }
    d.sessions += sign;
  };
  const add = (s: RolledUpSession) => {
    const bucket = bucketOf(s.started_at);
    at = bucket.getTime();
    rowsOf(s, bucket, emit);
  };
  before.forEach(add);
  sign = 1;
  after.forEach(add);
  return [...deltas.values()].filter((d) => d.sessions !== 0);
}

/**
 * The session rollup's changes: one row per attribute, keyed by (bucket, attribute, value);
 * `bucketOf` gives the bucket of a session start (15 minutes, or a UTC day for the day rollup).
 */
export function sessionRollupDeltas(
  before: RolledUpSession[],
  after: RolledUpSession[],
  bucketOf: (start: Date) => Date = rollupBucket,
): RollupDelta[] {
  return netSessionDeltas(
    before,
    after,
    (s, bucket) =>
      ROLLUP_DIMENSIONS.map((dimension) => ({
        key: `${dimension}\u0000${s[dimension]}`,
        row: { bucket, dimension, value: s[dimension] },
      })),
    bucketOf,
  );
}

/**
 * The bucket of the day rollups for a site in `zone`: the start of the site's local day of a
 * session start (localDayStart), so that a report in the site's zone (the default) reads a
 * range, or a day, week or month bucket, from whole day rows. Memoised by site day: each day
 * computed, [its start, the next day's start), is kept under every UTC day it overlaps, and an
 * instant inside it is answered from there. A backfill asks once per session and rollup; a
 * memo by 15-minute bucket still computed each quarter hour of a small site's sessions anew.
 */
export function localDayBucket(zone: string): (instant: Date) => Date {
  const days = new Map<number, Array<{ start: Date; end: number }>>();
  return (instant) => {
    const at = instant.getTime();
    const utcDay = Math.floor(at / DAY_MS);
    const known = days.get(utcDay)?.find((d) => d.start.getTime() <= at && at < d.end);
    if (known) return known.start;
    const start = localDayStart(instant, zone);
    const end = nextLocalDayStart(instant, zone).getTime();
    const day = { start, end };
    for (let u = Math.floor(start.getTime() / DAY_MS); u * DAY_MS < end; u++) {
      const list = days.get(u);
      if (list) list.push(day);
      else days.set(u, [day]);
    }
    return start;
  };
}

/**
 * A derived session as the attribute rollup reads it: its counts and its pageviews' engagement
 * sums (SESSION_ENGAGEMENT_COLUMNS, the time on page as a DECIMAL string of seconds).
 */
export type EngagedSession = RolledUpSession &
  Record<(typeof SESSION_ENGAGEMENT_COLUMNS)[number], number | string>;

/**
 * One row of the attribute rollup: a bucket and one value of every session attribute, the
 * sessions' counts and their engagement sums (SESSION_ENGAGEMENT_COLUMNS order, the time on
 * page in thousandths of a second).
 */
export type AttributeRollupDelta = { bucket: Date } & Record<SessionAttribute, string> &
  SessionCounts & { engagement: bigint[] };

/** A session's engagement sums in SESSION_ENGAGEMENT_COLUMNS order, the time on page in thousandths. */
function engagementOf(s: EngagedSession): bigint[] {
  return SESSION_ENGAGEMENT_COLUMNS.map((c) => (isSecondsSum(c) ? toMillis(s[c]) : BigInt(s[c])));
}

/**
 * The attribute rollup's changes: one row per bucket and combination of all five session
 * attributes, so that any conditions on them (filters) and a grouping by any one of them can
 * be answered from it, and, from its engagement sums, the time on page and scroll depth of
 * the whole sessions they select (pageviewEngagementBySession).
 */
export function attributeRollupDeltas(
  before: EngagedSession[],
  after: EngagedSession[],
  bucketOf: (start: Date) => Date = rollupBucket,
): AttributeRollupDelta[] {
  return netSessionDeltas(
    before,
    after,
    (s, bucket) => {
      const values = ROLLUP_DIMENSIONS.map((d) => s[d]);
      const row = { bucket, ...Object.fromEntries(ROLLUP_DIMENSIONS.map((d) => [d, s[d]])) } as {
        bucket: Date;
      } & Record<SessionAttribute, string>;
      return [{ key: attributeKey(values), row }];
    },
    bucketOf,
    engagementOf,
  );
}

/**
 * The text an attribute combination is keyed by (its MD5 is the table's key): each value
 * prefixed by its length in characters, so that no two combinations read the same. The
 * migration computes the same in SQL (attributeKeySql).
 */
export function attributeKey(values: readonly string[]): string {
  return values.map((v) => `${Array.from(v).length}:${v}`).join('');
}

/**
 * attributeKey over the columns of a sessions row, in SQL; with `alias` null the columns go
 * unqualified (a generated column's expression).
 */
export function attributeKeySql(alias: string | null): string {
  const c = (a: string) => (alias === null ? a : `${alias}.${a}`);
  return `CONCAT(${ROLLUP_DIMENSIONS.map((d) => `CHAR_LENGTH(${c(d)}), ':', ${c(d)}`).join(', ')})`;
}

/**
 * Fills attribute_combinations (migration 1767700000000) with every combination the sessions
 * have, by their generated attributes_hash: the same SQL on both engines.
 */
export async function fillAttributeCombinations(q: Queryable): Promise<void> {
  const attributes = ROLLUP_DIMENSIONS.join(', ');
  await q.query(
    `INSERT INTO attribute_combinations (site_id, attributes_hash, ${attributes})
     SELECT site_id, attributes_hash, ${ROLLUP_DIMENSIONS.map((a) => `MIN(${a})`).join(', ')}
     FROM sessions GROUP BY site_id, attributes_hash`,
  );
}

/** attributeKeySql in either engine's SQL (SQLite: `||` and length(), which counts characters). */
export function attributeKeySqlOf(d: Pick<SqlDialect, 'name'>, alias: string | null): string {
  if (d.name !== 'sqlite') return attributeKeySql(alias);
  const c = (a: string) => (alias === null ? a : `${alias}.${a}`);
  return ROLLUP_DIMENSIONS.map((a) => `length(${c(a)}) || ':' || ${c(a)}`).join(' || ');
}

/** One path rollup row's change in sessions. */
export interface PathRollupDelta {
  bucket: Date;
  dimension: PathDimension;
  path: string;
  sessions: number;
}

/** The same for entry and exit pages; a session without pageviews has neither. */
export function pathRollupDeltas(
  before: RolledUpSession[],
  after: RolledUpSession[],
  bucketOf: (start: Date) => Date = rollupBucket,
): PathRollupDelta[] {
  return netSessionCounts<PathRollupDelta>(
    before,
    after,
    (s, bucket, emit) => {
      for (const dimension of PATH_DIMENSIONS) {
        const path = s[dimension];
        if (path !== null) emit(`${dimension}\u0000${path}`, { bucket, dimension, path, sessions: 0 });
      }
    },
    bucketOf,
  );
}

const onBoundary = (instant: Date) => instant.getTime() % ROLLUP_BUCKET_MS === 0;

/**
 * Whether whole rollup buckets cover the range and every report bucket exactly: true for
 * every zone in use today; a zone with an offset that is not a multiple of 15 minutes (local
 * mean time before 1900) reads the raw tables instead.
 */
export function rollupCovers(range: ReportRange, buckets: readonly Bucket[] = []): boolean {
  return (
    onBoundary(range.startUtc) && onBoundary(range.endUtc) && buckets.every((b) => onBoundary(b.startUtc))
  );
}

/**
 * One row of the combination path rollup (session_combination_path_day_rollups): the sessions
 * of a site day with one combination of the five attributes (`attributes`, its attributeKey)
 * whose entry or exit page is `path`.
 */
export interface CombinationPathRollupDelta {
  bucket: Date;
  dimension: PathDimension;
  attributes: string;
  path: string;
  sessions: number;
}

/**
 * The combination path rollup's changes: per session, a row for its entry and one for its exit
 * page (none without pageviews) under its combination of attributes, so that the entry and exit
 * page lists under conditions on several attributes (SPEC §3) read the selected combinations'
 * rows, not each selected session.
 */
export function combinationPathRollupDeltas(
  before: RolledUpSession[],
  after: RolledUpSession[],
  bucketOf: (start: Date) => Date,
): CombinationPathRollupDelta[] {
  return netSessionCounts<CombinationPathRollupDelta>(
    before,
    after,
    (s, bucket, emit) => {
      const attributes = attributeKey(ROLLUP_DIMENSIONS.map((dim) => s[dim]));
      for (const dimension of PATH_DIMENSIONS) {
        const path = s[dimension];
        if (path === null) continue;
        const row = { bucket, dimension, attributes, path, sessions: 0 };
        emit(combinationPathRowKey(row), row);
      }
    },
    bucketOf,
  );
}

/** What identifies a combination path row (its table key, with the texts in place of their hashes). */
export function combinationPathRowKey(r: Omit<CombinationPathRollupDelta, 'sessions'>): string {
  return `${r.bucket.getTime()}\u0000${r.dimension}\u0000${r.attributes}\u0000${r.path}`;
}

/**
 * How a combination path row is stored: keyed by combination before the day (a request reads
 * its selected combinations' days), the combination and the page by their MD5 (the page's text
 * is in session_path_day_rollups, under the same hash and day).
 */
export const COMBINATION_PATH_ROLLUP = {
  table: 'session_combination_path_day_rollups',
  keys: ['dimension', 'attributes_hash', 'bucket', 'path_hash'],
  identity: ['dimension', 'attributes_hash', 'bucket', 'path_hash'],
  keyValues: (r: CombinationPathRollupDelta): unknown[] => [
    r.dimension,
    md5(r.attributes),
    r.bucket,
    md5(r.path),
  ],
} as const;

/**
 * What a pair row counts under an attribute's value: another attribute's values, or entry and
 * exit pages; the lists the overview shows (browser is not one: no report reads its rows).
 */
export const PAIR_DIMENSIONS = ['channel', 'source', 'country', 'device', ...PATH_DIMENSIONS] as const;
export type PairDimension = (typeof PAIR_DIMENSIONS)[number];

/**
 * One row of the pair rollup (session_pair_day_rollups): the sessions of a site day whose
 * `attribute` is `value` and whose `dimension` (another attribute the overview lists, or the
 * entry or exit page) is `item`.
 */
export interface PairRollupDelta {
  bucket: Date;
  attribute: SessionAttribute;
  value: string;
  dimension: PairDimension;
  item: string;
  sessions: number;
}

/**
 * The pair rollup's changes: per session, for each attribute, a row for each other attribute
 * of PAIR_DIMENSIONS and for its entry and exit page (none without pageviews), so that the top lists under
 * conditions on one attribute (SPEC §3) read the sessions of the selected values, a few rows
 * per item and day, instead of the range's sessions.
 */
export function pairRollupDeltas(
  before: RolledUpSession[],
  after: RolledUpSession[],
  bucketOf: (start: Date) => Date,
): PairRollupDelta[] {
  return netSessionCounts<PairRollupDelta>(
    before,
    after,
    (s, bucket, emit) => {
      for (const attribute of ROLLUP_DIMENSIONS) {
        const value = s[attribute];
        for (const dimension of PAIR_DIMENSIONS) {
          if (dimension === (attribute as string)) continue;
          const item = s[dimension];
          if (item === null) continue;
          const row = { bucket, attribute, value, dimension, item, sessions: 0 };
          emit(pairRowKey(row), row);
        }
      }
    },
    bucketOf,
  );
}

/** What identifies a pair row (its table key, with the item itself in place of its hash). */
export function pairRowKey(r: Omit<PairRollupDelta, 'sessions'>): string {
  return `${r.bucket.getTime()}\u0000${r.attribute}\u0000${r.value}\u0000${r.dimension}\u0000${r.item}`;
}

/**
 * How a pair row is stored: its key after site_id (the item keyed by its MD5: a path runs to
 * 2,048 characters), then the item itself, and the columns that identify the row.
 */
export const PAIR_ROLLUP = {
  table: 'session_pair_day_rollups',
  keys: ['attribute', 'dimension', 'value', 'bucket', 'item_hash', 'item'],
  identity: ['attribute', 'dimension', 'value', 'bucket', 'item_hash'],
  keyValues: (r: PairRollupDelta): unknown[] => [
    r.attribute,
    r.dimension,
    r.value,
    r.bucket,
    md5(r.item),
    r.item,
  ],
} as const;
