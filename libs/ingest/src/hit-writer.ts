import { parameterRows, SqlDialect } from '@app/db';
import { copyToLiveHits, liveHitsCutoff } from '@app/stats/rollups/live-hits';
import { addToOrderRollup, ORDER_ROLLUP_COLUMNS, OrderRollupTable } from '@app/stats/rollups/order-rollup';
import { pageviewMetrics, SCROLL_DEPTH_BUCKETS, scrollDepthCounts } from '@app/stats/sql/metrics';
import { Expression, SqlBool, sql } from 'kysely';
import { EntityManager } from 'typeorm';
import { BulkLoadUnavailable, loadNotAccepted, LoadOutcome, loadRows, LoadValue } from './bulk-load';
import { Hit } from './hit';
import { flatRows, MAX_IN_LIST } from './rollup-writer';

const HIT_COLUMNS = [
  'site_id',
  'hit_id',
  'type',
  'ts',
  'session_id',
  'visitor_id',
  'path',
  'channel',
  'source',
  'country',
  'device',
  'browser',
  'time_on_page_seconds',
  'scroll_depth',
  'name',
  'order_id',
  'revenue',
  'currency',
] as const;
const ORDER_COLUMNS = [
  'site_id',
  'order_id',
  'hit_id',
  'ts',
  'session_id',
  'visitor_id',
  'revenue',
  'currency',
] as const;
const ITEM_COLUMNS = ['site_id', 'order_id', 'line_no', 'sku', 'name', 'quantity', 'price'] as const;
const DIRTY_COLUMNS = ['site_id', 'session_id', 'marked_at'] as const;

/** Rows per multi-row INSERT: well under max_allowed_packet for 2 KB paths. */
const CHUNK = 500;

export interface BatchResult {
  inserted: number;
  duplicates: number;
  orders: number;
  /** Sites that got new hits: their data version must change once the batch commits. */
  sites: number[];
}

function groupBySite<T extends { siteId: number }>(items: T[]): Map<number, T[]> {
  const bySite = new Map<number, T[]>();
  for (const item of items) {
    const list = bySite.get(item.siteId);
    if (list) list.push(item);
    else bySite.set(item.siteId, [item]);
  }
  return bySite;
}

/**
 * The pairs of `groups` (site → values of `column`) of table alias `t` as one condition,
 * `(t.site_id = ? AND t.column IN (?, …)) OR …`: one range per site on a `(site_id, column)`
 * index on both engines, so a batch's sites are looked up in one statement, not one each.
 */
function siteValuesIn(t: string, column: string, groups: ReadonlyMap<number, readonly string[]>) {
  return sql<SqlBool>`(${sql.join(
    [...groups].map(
      ([siteId, values]) =>
        sql`(${sql.ref(`${t}.site_id`)} = ${siteId} AND ${sql.ref(`${t}.${column}`)} IN (${sql.join(values)}))`,
    ),
    sql` OR `,
  )})`;
}

/** Splits site → values into parts of at most `size` values in all, site order kept. */
function* partsOf<T>(groups: ReadonlyMap<number, readonly T[]>, size: number): Generator<Map<number, T[]>> {
  let part = new Map<number, T[]>();
  let count = 0;
  for (const [siteId, values] of groups) {
    for (let i = 0; i < values.length;) {
      const take = values.slice(i, i + size - count);
      part.set(siteId, [...(part.get(siteId) ?? []), ...take]);
      count += take.length;
      i += take.length;
      if (count === size) {
        yield part;
        part = new Map();
        count = 0;
      }
    }
  }
  if (count > 0) yield part;
}

/** The `site_id\u0000value` keys of `groups` already stored in `table`. */
async function existing(
  em: EntityManager,
  dialect: SqlDialect,
  table: string,
  column: string,
  groups: ReadonlyMap<number, readonly string[]>,
): Promise<Set<string>> {
  const found = new Set<string>();
  for (const part of partsOf(groups, CHUNK)) {
    const query = sql`SELECT t.site_id AS s, ${sql.ref(`t.${column}`)} AS v FROM ${sql.table(table)} t
      WHERE ${siteValuesIn('t', column, part)}`.compile(dialect.builder);
    const rows: Array<{ s: number | string; v: string }> = await em.query(query.sql, [...query.parameters]);
    for (const r of rows) found.add(`${Number(r.s)}\u0000${r.v}`);
  }
  return found;
}

/**
 * How the database numbers the rows of one multi-row INSERT into `hits`. On the MySQL family
 * with `innodb_autoinc_lock_mode` 0 or 1, a statement whose row count is known in advance gets
 * a block of ids of its own, `step` (`auto_increment_increment`) apart, the first of them
 * returned as its insert id: no other statement's row falls between. The rows a batch stored
 * are then read back as ranges of the primary key instead of one unique-key lookup each.
 * `undefined` where that does not hold (SQLite; the interleaved mode 2): looked up by id.
 */
export interface SeqBlocks {
  step: number;
}

/** The numbering of this connection's INSERTs, asked once per import. */
export async function seqBlocksOf(em: EntityManager, dialect: SqlDialect): Promise<SeqBlocks | undefined> {
  if (dialect.name === 'sqlite') return undefined;
  const [row]: Array<{ mode: number | string; step: number | string }> = await em.query(
    'SELECT @@innodb_autoinc_lock_mode AS mode, @@auto_increment_increment AS step',
  );
  const mode = Number(row.mode);
  return mode === 0 || mode === 1 ? { step: Number(row.step) } : undefined;
}

/** The first and last `seq` of the rows one INSERT stored. */
export type SeqRange = [first: number, last: number];

/** INSERTs `rows` in statements of CHUNK rows; with `blocks`, returns the ranges of seq they got. */
async function insertRows(
  em: EntityManager,
  dialect: SqlDialect,
  table: string,
  columns: readonly string[],
  rows: unknown[][],
  ignore: boolean,
  blocks?: SeqBlocks,
): Promise<SeqRange[]> {
  const ranges: SeqRange[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const part = rows.slice(i, i + CHUNK);
    const sql = ignore
      ? dialect.insertIgnore(table, columns, part.length)
      : `INSERT INTO ${table} (${columns.join(',')}) VALUES ${parameterRows(columns, part.length)}`;
    const result: { insertId?: number | string; affectedRows?: number } = await em.query(sql, flatRows(part));
    if (blocks && !ignore) {
      if (result.affectedRows !== part.length || result.insertId === undefined) {
        throw new Error(`INSERT INTO ${table} stored ${result.affectedRows} of ${part.length} rows`);
      }
      const first = Number(result.insertId);
      ranges.push([first, first + (part.length - 1) * blocks.step]);
    }
  }
  return ranges;
}

/**
 * How an import stores its hits on the MySQL family: with LOAD DATA LOCAL (bulk-load.ts) until the
 * server refuses it, then with INSERT. One object per import, shared by its batches.
 */
export interface HitStorage {
  load: boolean;
  /**
   * Set while batches are mostly hits stored before (a file imported again): their ids are then
   * looked up before the load, which costs less than a load that skips most of its rows.
   */
  lookUpFirst?: boolean;
}

/** The `site_id\u0000id` key of a hit, as `existing` returns them. */
const hitKey = (h: Hit) => `${h.siteId}\u0000${h.id}`;

/** Site → the distinct ids of `hits`, for `existing`. */
function idsBySite(hits: Hit[]): Map<number, string[]> {
  return new Map(
    [...groupBySite(hits)].map(([siteId, list]) => [siteId, [...new Set(list.map((h) => h.id))]]),
  );
}

/** A hit as a row of HIT_COLUMNS. */
function hitRow(dialect: SqlDialect, h: Hit): LoadValue[] {
  return [
    h.siteId,
    h.id,
    h.type,
    h.ts,
    h.sessionId,
    h.visitorId,
    h.path,
    h.channel,
    h.source,
    h.country,
    h.device,
    h.browser,
    dialect.decimalIn(h.timeOnPageSeconds, 3),
    h.scrollDepth,
    h.name,
    h.orderId,
    dialect.decimalIn(h.revenue, 2),
    h.currency,
  ];
}

/**
 * Stores the hit rows of a batch whose ids were looked up first; with `blocks`, returns the
 * ranges of seq they got. A LOAD DATA gets one block of seq (the MySQL family's "bulk insert",
 * under the table's AUTO-INC lock with `innodb_autoinc_lock_mode` 0 or 1). Throws
 * BulkLoadWarnings when the server did not take the rows as sent: the caller rolls back and
 * writes the batch again without `storage`.
 */
async function storeHits(
  em: EntityManager,
  dialect: SqlDialect,
  rows: LoadValue[][],
  blocks?: SeqBlocks,
  storage?: HitStorage,
): Promise<SeqRange[]> {
  if (storage?.load && rows.length > 0) {
    try {
      const outcome = await loadRows(em, 'hits', HIT_COLUMNS, rows);
      if (outcome.warnings > 0 || outcome.stored !== rows.length || outcome.first === undefined) {
        throw loadNotAccepted('hits', rows.length, outcome);
      }
      return blocks ? [[outcome.first, outcome.first + (rows.length - 1) * blocks.step]] : [];
    } catch (e) {
      if (!(e instanceof BulkLoadUnavailable)) throw e;
      // A refused statement leaves the transaction as it was: the rest of the import INSERTs.
      storage.load = false;
    }
  }
  return insertRows(em, dialect, 'hits', HIT_COLUMNS, rows, false, blocks);
}

/** The hits a batch stored, and the ranges of seq they got. */
interface StoredHits {
  fresh: Hit[];
  stored: SeqRange[];
}

/**
 * Stores a batch's hits (each id once) with one LOAD DATA and no look-up before it: the unique
 * key `(site_id, hit_id)` makes the server skip, with a warning, each hit stored before. The
 * look-up of every id cost the server ~11 % of an import's CPU (BENCHMARKS.md run AM); a batch
 * now reads back only which rows it stored, and only when the server skipped some. Returns the
 * hits stored and their range of seq, or `undefined` when the server refuses LOAD DATA LOCAL.
 * Throws BulkLoadWarnings when the server skipped or adjusted a row for any other reason.
 */
async function loadNewHits(
  em: EntityManager,
  dialect: SqlDialect,
  hits: Hit[],
  blocks: SeqBlocks,
  storage: HitStorage,
): Promise<StoredHits | undefined> {
  if (hits.length === 0) return { fresh: [], stored: [] };
  let outcome: LoadOutcome;
  try {
    outcome = await loadRows(
      em,
      'hits',
      HIT_COLUMNS,
      hits.map((h) => hitRow(dialect, h)),
    );
  } catch (e) {
    if (!(e instanceof BulkLoadUnavailable)) throw e;
    storage.load = false;
    return undefined;
  }
  const refused = () => loadNotAccepted('hits', hits.length, outcome);
  // One warning per skipped row, and none for a row stored: a value adjusted is refused.
  if (outcome.warnings !== hits.length - outcome.stored) throw refused();
  const first = outcome.first;
  if (first !== undefined && outcome.stored === hits.length) {
    return { fresh: hits, stored: [[first, first + (hits.length - 1) * blocks.step]] };
  }
  // Which rows it stored. Under the AUTO-INC lock (`blocks`: mode 0 or 1) no other statement's
  // row falls between a load's first and last seq, and the first is LAST_INSERT_ID().
  const storedKeys = new Set<string>();
  let last: number | undefined;
  if (first !== undefined) {
    const rows: Array<{ s: number | string; v: string; seq: number | string }> = await em.query(
      'SELECT site_id AS s, hit_id AS v, seq FROM hits WHERE seq >= ? ORDER BY seq LIMIT ?',
      [first, outcome.stored],
    );
    for (const r of rows) {
      storedKeys.add(`${Number(r.s)}\u0000${r.v}`);
      last = Number(r.seq);
    }
  }
  const fresh = hits.filter((h) => storedKeys.has(hitKey(h)));
  const skipped = hits.filter((h) => !storedKeys.has(hitKey(h)));
  // Each skipped hit must be one stored before; the server skipped it for another reason otherwise.
  const known = await existing(em, dialect, 'hits', 'hit_id', idsBySite(skipped));
  if (fresh.length !== outcome.stored || skipped.some((h) => !known.has(hitKey(h)))) throw refused();
  return { fresh, stored: first === undefined ? [] : [[first, last ?? first]] };
}

/** The hits' unique key by site and id (migration 1763800000000): how a batch's rows are found by id. */
const HITS_BY_ID = 'uq_hits_site_hit';

const HIT_ROLLUP_SUMS = [
  'pageviews',
  'timed_pageviews',
  'time_on_page_seconds',
  ...SCROLL_DEPTH_BUCKETS.map((b) => b.column),
];

/**
 * The statements that add the batch's new pageviews to the pageview rollup, computed by the
 * database from the rows just stored, so the rollup holds exactly the stored (rounded) values;
 * every site of the batch in one statement. `stored`: the seq ranges the batch's load stored,
 * or none, its rows then found by their ids.
 */
export function hitRollupStatements(
  dialect: SqlDialect,
  pageviews: Hit[],
  stored: SeqRange[],
): Array<{ sql: string; parameters: readonly unknown[] }> {
  // The metrics are the report's own (pageviewMetrics, scrollDepthCounts), over the rows just stored.
  const m = pageviewMetrics('h');
  const bucket = sql.raw<Date>(dialect.floorToQuarterHour('h.ts'));
  // Aliases other than the rollup's column names: ON DUPLICATE KEY UPDATE must not see them.
  const sums = [m.pageviews, m.timedPageviews, m.timeOnPageSum, ...scrollDepthCounts('h')];
  // By their ids, the rows are read through the (site_id, hit_id) key whatever the statistics
  // say: without them SQLite took (site_id, type) for the type's test and read every pageview
  // of the site for each batch (at 1M hits, ~1 s a batch: the import fell to ~900 hits/s).
  const hits = sql.raw(stored.length > 0 ? 'hits h' : dialect.tableWithIndex('hits', 'h', HITS_BY_ID));
  return batchRows(pageviews, stored).map((rows) => {
    const select = sql`SELECT h.site_id, ${bucket} AS b, ${sql.join(
      sums.map((sum, n) => sql`${sum} AS ${sql.ref(`v${n}`)}`),
    )} FROM ${hits} WHERE ${rows} AND h.type = 'pageview' GROUP BY h.site_id, ${bucket}`.compile(
      dialect.builder,
    );
    return {
      sql: dialect.upsertAddSelect('hit_rollups', ['site_id', 'bucket'], HIT_ROLLUP_SUMS, select.sql),
      parameters: select.parameters,
    };
  });
}

async function addToHitRollups(em: EntityManager, dialect: SqlDialect, pageviews: Hit[], stored: SeqRange[]) {
  for (const statement of hitRollupStatements(dialect, pageviews, stored)) {
    await em.query(statement.sql, [...statement.parameters]);
  }
}

/**
 * Copies the batch's hits stamped within the last hour (`now` the importer's clock) into
 * `live_hits`, on the database: nothing to do for the hits of an old file.
 */
async function addToLiveHits(
  em: EntityManager,
  dialect: SqlDialect,
  fresh: Hit[],
  stored: SeqRange[],
  now: Date,
) {
  const cutoff = liveHitsCutoff(now);
  const recent = fresh.filter((h) => h.ts >= cutoff);
  for (const rows of batchRows(recent, stored)) {
    await copyToLiveHits(em, dialect, sql`${rows}`.compile(dialect.builder), cutoff);
  }
}

/**
 * Conditions over `hits h` that select the batch's own rows among `hits` (none when `hits` is
 * empty): by the seq ranges it stored, every hit it stored, by primary key; or by the hits' ids.
 */
function batchRows(hits: Hit[], stored: SeqRange[]): Array<Expression<SqlBool>> {
  if (hits.length === 0) return [];
  if (stored.length > 0) {
    return [
      sql<SqlBool>`(${sql.join(
        stored.map(([first, last]) => sql`${sql.ref('h.seq')} BETWEEN ${first} AND ${last}`),
        sql` OR `,
      )})`,
    ];
  }
  const ids = new Map([...groupBySite(hits)].map(([siteId, list]) => [siteId, list.map((h) => h.id)]));
  return [...partsOf(ids, ROLLUP_IDS_PER_STATEMENT)].map((part) => siteValuesIn('h', 'hit_id', part));
}

const ROLLUP_IDS_PER_STATEMENT = MAX_IN_LIST;

/** Adds the orders just stored (rows of ORDER_COLUMNS) to the order and item rollups. */
async function addToOrderRollups(em: EntityManager, dialect: SqlDialect, orderRows: unknown[][]) {
  const bySite = new Map<number, string[]>();
  for (const [siteId, orderId] of orderRows as Array<[number, string]>) {
    bySite.set(siteId, [...(bySite.get(siteId) ?? []), orderId]);
  }
  // Sites in order, so that two batches written at once lock their rollup rows in one order.
  for (const [siteId, ids] of [...bySite].sort(([a], [b]) => a - b)) {
    for (let i = 0; i < ids.length; i += ROLLUP_IDS_PER_STATEMENT) {
      const orderIds = ids.slice(i, i + ROLLUP_IDS_PER_STATEMENT);
      for (const table of Object.keys(ORDER_ROLLUP_COLUMNS) as OrderRollupTable[]) {
        const statement = addToOrderRollup(dialect, table, { siteId, orderIds });
        await em.query(statement.sql, [...statement.parameters]);
      }
    }
  }
}

/**
 * Writes one batch of validated hits inside the caller's transaction: the hits not stored
 * yet (idempotent on `(site_id, id)`), the orders they open (first imported hit wins), their
 * items, what both add to the rollups kept at import (hit, order and item rollups), the recent
 * ones' rows of `live_hits`, and the aggregation queue entries of their sessions. All of it or
 * none of it.
 */
export async function writeHitBatch(
  em: EntityManager,
  dialect: SqlDialect,
  batch: Hit[],
  now: Date,
  blocks?: SeqBlocks,
  storage?: HitStorage,
): Promise<BatchResult> {
  // The first line of an id in the batch wins; a later one is a duplicate.
  const unique: Hit[] = [];
  const seen = new Set<string>();
  for (const h of batch) {
    const key = hitKey(h);
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(h);
  }
  let loaded: StoredHits | undefined;
  if (storage?.load && blocks && !storage.lookUpFirst) {
    loaded = await loadNewHits(em, dialect, unique, blocks, storage);
  }
  if (!loaded) {
    const known = await existing(em, dialect, 'hits', 'hit_id', idsBySite(unique));
    const fresh = unique.filter((h) => !known.has(hitKey(h)));
    const rows = fresh.map((h) => hitRow(dialect, h));
    loaded = { fresh, stored: await storeHits(em, dialect, rows, blocks, storage) };
  }
  const { fresh, stored } = loaded;
  if (storage) storage.lookUpFirst = (unique.length - fresh.length) * 2 > unique.length;

  const orderRows: unknown[][] = [];
  const itemRows: unknown[][] = [];
  const purchases = groupBySite(fresh.filter((h) => h.type === 'purchase'));
  const knownOrders = await existing(
    em,
    dialect,
    'orders',
    'order_id',
    new Map([...purchases].map(([siteId, hits]) => [siteId, [...new Set(hits.map((h) => h.orderId!))]])),
  );
  for (const [siteId, hits] of purchases) {
    for (const h of hits) {
      const key = `${siteId}\u0000${h.orderId}`;
      if (knownOrders.has(key)) continue;
      knownOrders.add(key);
      const revenue = dialect.decimalIn(h.revenue, 2);
      orderRows.push([siteId, h.orderId, h.id, h.ts, h.sessionId, h.visitorId, revenue, h.currency]);
      h.items.forEach((item, i) =>
        itemRows.push([
          siteId,
          h.orderId,
          i + 1,
          item.sku,
          item.name,
          item.quantity,
          dialect.decimalIn(item.price, 2),
        ]),
      );
    }
  }
  await insertRows(em, dialect, 'orders', ORDER_COLUMNS, orderRows, false);
  await insertRows(em, dialect, 'order_items', ITEM_COLUMNS, itemRows, false);

  // What the batches written at once share comes last: the queue entries of a session whose
  // hits span two batches, and the rollup rows of a quarter hour. Each is locked until the
  // commit, so a batch that needs a row another batch holds waits only for that batch's end.
  // Sorted so that concurrent writers and the aggregator take row locks in one order.
  const sessions = [...new Set(fresh.map((h) => `${h.siteId}\u0000${h.sessionId}`))].sort();
  await insertRows(
    em,
    dialect,
    'dirty_sessions',
    DIRTY_COLUMNS,
    sessions.map((key) => {
      const [siteId, sessionId] = key.split('\u0000');
      return [Number(siteId), sessionId, now];
    }),
    true,
  );
  await addToOrderRollups(em, dialect, orderRows);
  await addToHitRollups(
    em,
    dialect,
    fresh.filter((h) => h.type === 'pageview'),
    stored,
  );
  await addToLiveHits(em, dialect, fresh, stored, now);

  return {
    inserted: fresh.length,
    duplicates: batch.length - fresh.length,
    orders: orderRows.length,
    sites: [...new Set(fresh.map((h) => h.siteId))],
  };
}
