import {
  col,
  combinationSelected,
  decideTable,
  hashLiterals,
  partBuckets,
  TOP_ROWS_INDEXES,
  ReportDb,
  ReportStatement,
  rollupParts,
  rollupSpanParts,
  selectsFewCombinations,
  sessionPagesComplement,
  PageComplement,
  unionAllOf,
  sessionMetrics,
  sessionRollupMetrics,
  sessionsSource,
  StatsQuery,
  StatsRepository,
  where,
} from '@app/stats';
import type { SqlDialect } from '@app/db';
import { Injectable } from '@nestjs/common';
import { Expression, RawBuilder, SelectQueryBuilder, sql, SqlBool } from 'kysely';

export interface HeadlineTotals {
  sessions: number;
  visitors: number;
  bounces: number;
  /** Pageviews of the range's sessions, wherever those pageviews fall. */
  sessionPageviews: number;
  /** Pageviews whose own ts is in the range. */
  pageviews: number;
  /** Σ duration_seconds; the driver may give the exact DECIMAL as a string. */
  durationSeconds: number | string;
}

export const TOP_LISTS = ['channel', 'source', 'country', 'device', 'entry_path', 'exit_path'] as const;
export type TopList = (typeof TOP_LISTS)[number];

export interface TopListRow {
  list: TopList;
  value: string;
  sessions: number;
}

/**
 * A list's values grouped: `value`, or for a path list read from its rollups or by hash the
 * path's hash (named later), with one of its sessions (`rep`) where it was read from them.
 */
interface TopListGroupRow {
  list: TopList;
  value: string | null;
  path_hash: Buffer | null;
  rep: string | null;
  sessions: number | string;
}

/** No representative session: the group's value is named otherwise. */
const NO_REP = sql<string | null>`NULL`.as('rep');

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- rollup and raw groups read different tables */
type TopListGroup = SelectQueryBuilder<any, any, TopListGroupRow>;

/** The lists one top-lists statement reads together: the overview runs these concurrently. */
export const TOP_LIST_STATEMENTS: ReadonlyArray<readonly TopList[]> = [
  ['channel', 'source', 'country', 'device'],
  ['entry_path'],
  ['exit_path'],
];

/**
 * How many top rows of each bucket listsFromTopRows reads for a list of `limit` values: enough
 * that the values past them are small beside the `limit`-th (at 1M pageviews, the entry pages'
 * 20th rows of the 29 days' buckets sum to 1,522 sessions, the 10th page has 3,673).
 */
export const topRowsPerBucket = (limit: number) => Math.max(2 * limit, 20);

/**
 * The longest lists listsFromTopRows settles: its candidates grow with the limit, and each is
 * looked up in every bucket. At 10M pageviews over 29 days, in turn with the statement that
 * reads the lists whole (p50): `limit` 5 41–44 against 48–53 ms, 10 46–53 against 58–63, 20
 * even (60–62) for 7–11 ms more of the API's CPU; at 1M, 50 and 100 were slower (BENCHMARKS.md
 * run BL).
 */
export const TOP_ROWS_UP_TO_LIMIT = 10;

/**
 * The most sessions a value that no bucket's top rows held can have: in each bucket that gave
 * `rows` rows, at most the last one's; none in a bucket that gave fewer (all its values were read).
 */
export function leftOutBound(parts: Iterable<{ rows: number; last: number }>, rows: number): number {
  let bound = 0;
  for (const part of parts) if (part.rows === rows) bound += part.last;
  return bound;
}

/**
 * A list's top `limit` from its candidates' totals (`ranked`: by sessions desc then value asc,
 * at most `limit`), when no value left out can reach it: every such value has at most `bound`
 * sessions, so the `limit`-th candidate must have more (or nothing was left out). Else undefined.
 */
export function settledTop(ranked: TopListRow[], limit: number, bound: number): TopListRow[] | undefined {
  return bound === 0 || (ranked.length >= limit && ranked[limit - 1].sessions > bound) ? ranked : undefined;
}

/** The rows of one span of a span rollup (rollupSpanParts). */
const ofSpan = (span: number, alias: string) => sql<SqlBool>`${sql.ref(`${alias}.span`)} = ${span}`;

/** Where an unfiltered list's sessions are kept by quarter hour, by site day and by block of days. */
const LIST_ROLLUPS = {
  attribute: { quarter: 'session_rollups', day: 'session_day_rollups', span: 'session_span_rollups' },
  path: {
    quarter: 'session_path_rollups',
    day: 'session_path_day_rollups',
    span: 'session_path_span_rollups',
  },
} as const;

const isPathList = (list: TopList) => list === 'entry_path' || list === 'exit_path';

/**
 * The parts of an unfiltered list's rollups over `query`'s range (rollupSpanParts: whole blocks
 * of days, the days around them), each with its buckets; null when the range has ragged quarter
 * hours. The attribute and page rollups are kept at the same grains, so one answer serves both.
 */
export function listParts(query: StatsQuery): Array<{ span: number; buckets: Date[] }> | null {
  const { quarter, day, span } = LIST_ROLLUPS.attribute;
  const parts = rollupSpanParts(query, quarter, day, span);
  if (parts.some((part) => part.table === quarter)) return null;
  return parts.map((part) => ({ span: part.span, buckets: partBuckets(part, query.site.timezone) }));
}

/** The table of `list`'s rows of a part's grain (span 0: day rows). */
function listTable(list: TopList, span: number): keyof typeof TOP_ROWS_INDEXES {
  const rollups = LIST_ROLLUPS[isPathList(list) ? 'path' : 'attribute'];
  return span > 0 ? rollups.span : rollups.day;
}

/** `list`'s rows (alias `r`) of one grain: the site, the list, the span when a block's. */
function listRows(query: StatsQuery, list: TopList, span: number, r = 'r'): RawBuilder<SqlBool> {
  const ofBlocks = span > 0 ? sql` AND ${ofSpan(span, r)}` : sql``;
  return sql<SqlBool>`${sql.ref(`${r}.site_id`)} = ${query.site.id} AND ${sql.ref(`${r}.dimension`)} = ${sql.lit(list)}${ofBlocks}`;
}

/** A row of partTopRows: a bucket's (`part`) value or page hash, and its sessions. */
interface PartTopRow {
  list: TopList;
  part: number;
  value: string | null;
  path_hash: string | null;
  /** The value, or the page's path. */
  name: string;
  sessions: number | string;
}

/**
 * A list row's key: the value of an attribute list, the hash of a page list's path in hex (as
 * the SQLite read pool's children hand text, not bytes, back).
 */
const keyColumns = (list: TopList) =>
  isPathList(list)
    ? sql`NULL AS value, HEX(r.path_hash) AS path_hash`
    : sql`r.value AS value, NULL AS path_hash`;

/** Two values in the binary order the statements rank by (utf8mb4_nopad_bin, SQLite's BINARY): their UTF-8 bytes. */
export const byBytes = (a: string, b: string) =>
  Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * A `page!=` query's lists as the site's less the path's (sessionPagesComplement), where the
 * site's rollups answer each of `lists`; else undefined.
 */
function listsLessPath(query: StatsQuery, lists: readonly TopList[]): PageComplement | undefined {
  const each = lists.map((list) => sessionPagesComplement(query, { metrics: ['sessions'], dimension: list }));
  return each.every((without) => without !== undefined) ? each[0] : undefined;
}

/** A path list's name for a hash (and its session `rep`, where one was read). */
type PathNamer = (hash: Expression<unknown>, rep: Expression<unknown>) => Expression<string>;

/**
 * The groups of each of `lists` over `query`'s sessions (TopListGroupRow: a value, or a page's
 * hash, or a session of it to name it by, with its sessions), and how to name each path list's
 * groups: rankedLists ranks them.
 */
function listGroups(
  d: SqlDialect,
  query: StatsQuery,
  lists: readonly TopList[],
): { groups: TopListGroup[]; pathOf: Map<TopList, PathNamer> } {
  /** Per rolled-up path list: the path of `hash` from the first part that holds it. */
  const pathOf = new Map<TopList, PathNamer>();
  /** A path list's candidate named by its session `rep`'s row in `sessions`, read by key. */
  const namedBySession =
    (list: 'entry_path' | 'exit_path') =>
    (_: Expression<unknown>, rep: Expression<unknown>): Expression<string> =>
      sql<string>`(${d.builder
        .selectFrom('sessions as n')
        .select(`n.${list}`)
        .where('n.site_id', '=', query.site.id)
        .where(sql<SqlBool>`${col('n', 'session_id')} = ${rep}`)})`;
  const tableOf = new Map(
    lists.map((list) => [list, decideTable(query, 'sessions', { metrics: ['sessions'], dimension: list })]),
  );
  // Attribute lists read from the sessions themselves, or from the attribute rollup's rows of
  // the few combinations a request listed: grouped together below, in one read.
  const rawAttributes = lists.filter(
    (list) => !list.endsWith('_path') && tableOf.get(list)!.kind !== 'rollup',
  );
  const rolledUpAttributes = selectsFewCombinations(query)
    ? lists.filter((list) => tableOf.get(list)!.rollupTable === 'session_attribute_rollups')
    : [];
  const together =
    rawAttributes.length > 1 ? rawAttributes : rolledUpAttributes.length > 1 ? rolledUpAttributes : [];
  const groups = lists
    .filter((list) => !together.includes(list))
    .map((list): TopListGroup => {
      const table = tableOf.get(list)!;
      if (table.rollupTable === 'session_pair_day_rollups') {
        // Under conditions on one attribute: the selected values' day rows of this list, by
        // item. A page list is grouped by the page's hash alone and its candidates named after
        // (as the unfiltered page lists: at 10M, 42k rows under country==US in 21 ms, not 66).
        const selected = where.sessionPairRollups(query, table.rollupDimension!, list, 'p');
        const byPath = list === 'entry_path' || list === 'exit_path';
        if (byPath) {
          pathOf.set(
            list,
            (hash) =>
              sql<string>`(${d.builder
                .selectFrom('session_pair_day_rollups as n')
                .select('n.item')
                .where(where.sessionPairRollups(query, table.rollupDimension!, list, 'n'))
                .where(sql<SqlBool>`${sql.ref('n.item_hash')} = ${hash}`)
                .limit(1)})`,
          );
        }
        return d.builder
          .selectFrom('session_pair_day_rollups as p')
          .select([
            sql.lit(list).as('list'),
            (byPath ? sql<string | null>`NULL` : sql<string>`MIN(${sql.ref('p.item')})`).as('value'),
            (byPath ? sql.ref('p.item_hash') : sql<Buffer | null>`NULL`).as('path_hash'),
            NO_REP,
            sessionRollupMetrics('p').sessions.as('sessions'),
          ])
          .where(selected)
          .groupBy('p.item_hash') as TopListGroup;
      }
      if (table.rollupTable === 'session_attribute_rollups') {
        // Whole site days from the day rows, the quarter hours around them from the 15-minute
        // rows, each part summed by value first: the union MariaDB materialises then holds a
        // row per value, not one per combination of the five attributes and day (at 10M, tens
        // of thousands of rows of a VARCHAR(255), past the in-memory temporary tables).
        const parts = rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups').map(
          (part) =>
            d.builder
              .selectFrom(
                where.attributeRollupPart(part.query, part.table, 'a') as 'session_attribute_rollups as a',
              )
              .select([sql.ref(`a.${list}`).as('value'), sessionRollupMetrics('a').sessions.as('sessions')])
              .where(where.sessionAttributeRollups(part.query, 'a'))
              .groupBy(sql.ref(`a.${list}`)),
        );
        return d.builder
          .selectFrom(unionAllOf(parts).as('a'))
          .select([
            sql.lit(list).as('list'),
            sql.ref('a.value').as('value'),
            sql<Buffer | null>`NULL`.as('path_hash'),
            NO_REP,
            sessionRollupMetrics('a').sessions.as('sessions'),
          ])
          .groupBy('a.value') as TopListGroup;
      }
      if (table.rollupTable === 'session_combination_path_day_rollups') {
        // Under conditions on several attributes, over whole site days: the selected
        // combinations' day rows of this list by the page's hash (at 10M under three attribute
        // conditions, 110k rows read instead of 333k sessions), each candidate named by a day row of
        // the unfiltered page rollup, which holds every page a session of the range entered by
        // or left from.
        const unfiltered = { ...query, filters: [] };
        pathOf.set(
          list,
          (hash) =>
            sql<string>`(${d.builder
              .selectFrom('session_path_day_rollups as n')
              .select('n.path')
              .where(where.sessionPathRollups(unfiltered, list, 'n'))
              .where(sql<SqlBool>`${sql.ref('n.path_hash')} = ${hash}`)
              .limit(1)})`,
        );
        return d.builder
          .selectFrom('session_combination_path_day_rollups as c')
          .select([
            sql.lit(list).as('list'),
            sql<string | null>`NULL`.as('value'),
            'c.path_hash',
            NO_REP,
            sessionRollupMetrics('c').sessions.as('sessions'),
          ])
          .where(where.combinationPathRollups(query, list, 'c'))
          .groupBy('c.path_hash') as TopListGroup;
      }
      const rollup = table.kind === 'rollup';
      if (rollup && (list === 'entry_path' || list === 'exit_path')) {
        // Whole aligned blocks of site days from the span rows, the days and quarter hours around them.
        const { quarter, day, span } = LIST_ROLLUPS.path;
        const parts = rollupSpanParts(query, quarter, day, span);
        pathOf.set(list, (hash) => {
          const named = parts.map(
            (part) =>
              sql<string>`(${d.builder
                .selectFrom(`${part.table} as n` as 'session_path_rollups as n')
                .select('n.path')
                .where(where.sessionPathRollups(part.query, list, 'n'))
                .$if(part.span > 0, (qb) => qb.where(ofSpan(part.span, 'n')))
                .where(sql<SqlBool>`${sql.ref('n.path_hash')} = ${hash}`)
                .limit(1)})`,
          );
          return named.length === 1 ? named[0] : sql<string>`COALESCE(${sql.join(named)})`;
        });
        return d.builder
          .selectFrom(
            unionAllOf(
              parts.map((part) =>
                d.builder
                  .selectFrom(`${part.table} as p` as 'session_path_rollups as p')
                  .select(['p.path_hash', 'p.sessions'])
                  .where(where.sessionPathRollups(part.query, list, 'p'))
                  .$if(part.span > 0, (qb) => qb.where(ofSpan(part.span, 'p'))),
              ),
            ).as('p'),
          )
          .select([
            sql.lit(list).as('list'),
            sql<string | null>`NULL`.as('value'),
            'p.path_hash',
            NO_REP,
            sessionRollupMetrics('p').sessions.as('sessions'),
          ])
          .groupBy('p.path_hash') as TopListGroup;
      }
      if (rollup) {
        // Whole aligned blocks of site days from the span rows, the days and quarter hours
        // around them: at 10M, the source list's 30 days were 12,252 day rows.
        const { quarter, day, span } = LIST_ROLLUPS.attribute;
        const parts = rollupSpanParts(query, quarter, day, span).map((part) =>
          d.builder
            .selectFrom(`${part.table} as r` as 'session_rollups as r')
            .select(['r.value', 'r.sessions'])
            .where(where.sessionRollups(part.query, list, 'r'))
            .$if(part.span > 0, (qb) => qb.where(ofSpan(part.span, 'r'))),
        );
        return d.builder
          .selectFrom(unionAllOf(parts).as('r'))
          .select([
            sql.lit(list).as('list'),
            sql.ref('r.value').as('value'),
            sql<Buffer | null>`NULL`.as('path_hash'),
            NO_REP,
            sessionRollupMetrics('r').sessions.as('sessions'),
          ])
          .groupBy('r.value') as TopListGroup;
      }
      const source = sessionsSource(query, 's');
      if ((list === 'entry_path' || list === 'exit_path') && query.tables !== 'raw') {
        // The selected sessions' pages grouped, each candidate named by one of its sessions,
        // read by key. Under conditions on attributes, read from the combinations' index alone
        // (where.sessions), and under page== one path from session_pages: by the page's stored
        // hash (at 10M under three attribute conditions, ~100k sessions: 0.53–0.61 s grouped by
        // the page itself; under /pricing, 726k rows: 1.2–1.3 s by the page, 0.7 s by its
        // hash). Where each session is tested as it is read: by the dialect's short key of the
        // path (pathGroupKey), which MariaDB groups in memory. The raw path, the parity
        // reference, groups by the path.
        const hashOf = list === 'entry_path' ? 'entry_hash' : 'exit_hash';
        const byHash = combinationSelected(query, 's') !== null || source.pages;
        pathOf.set(list, namedBySession(list));
        return d.builder
          .selectFrom(source.from as 'sessions as s')
          .select([
            sql.lit(list).as('list'),
            sql<string | null>`NULL`.as('value'),
            // By hash, the hash too: the site's rows of a page (listsLessPath) have it as their key.
            (byHash ? col('s', hashOf) : sql<Buffer | null>`NULL`).as('path_hash'),
            sql<string>`MIN(${col('s', 'session_id')})`.as('rep'),
            sessionMetrics('s').sessions.as('sessions'),
          ])
          .where(where.sessions(query, 's', source))
          .where(col('s', byHash ? hashOf : list), 'is not', null)
          .groupBy(byHash ? [col('s', hashOf)] : d.pathGroupKey(col('s', list))) as TopListGroup;
      }
      return d.builder
        .selectFrom(source.from as 'sessions as s')
        .select([
          sql.lit(list).as('list'),
          sql.ref(`s.${list}`).as('value'),
          sql<Buffer | null>`NULL`.as('path_hash'),
          NO_REP,
          sessionMetrics('s').sessions.as('sessions'),
        ])
        .where(where.sessions(query, 's', source))
        .$if(list.endsWith('_path'), (qb) => qb.where(col('s', list), 'is not', null))
        .groupBy(`s.${list}`) as TopListGroup;
    });
  if (together.length > 0) {
    // The selected sessions read once, by combination of the lists' values, then summed per
    // list: one read of the range's sessions (and of a page or goal condition's test for each)
    // instead of one per list (at 10M under page==/pricing, 4 × 12.8M index entries). From the
    // attribute rollup, each part (day rows, quarter hours) summed by those values first: at
    // most a row per listed combination each (LISTED_COMBINATIONS), where one read per list
    // read each selected combination's rows four times (at 10M under three attribute
    // conditions, 4 × 2,462 day rows).
    const source = sessionsSource(query, 's');
    const combinationsOf = () => {
      if (together !== rawAttributes) {
        return unionAllOf(
          rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups').map((part) =>
            d.builder
              .selectFrom(
                where.attributeRollupPart(part.query, part.table, 'a') as 'session_attribute_rollups as a',
              )
              .select([
                ...together.map((list) => sql.ref(`a.${list}`).as(list)),
                sessionRollupMetrics('a').sessions.as('n'),
              ])
              .where(where.sessionAttributeRollups(part.query, 'a'))
              .groupBy(together.map((list) => sql.ref(`a.${list}`))),
          ),
        ).as('m');
      }
      if (!source.pages) {
        return d.builder
          .selectFrom(source.from as 'sessions as s')
          .select([
            ...together.map((list) => sql.ref(`s.${list}`).as(list)),
            sessionMetrics('s').sessions.as('n'),
          ])
          .where(where.sessions(query, 's', source))
          .groupBy(together.map((list) => sql.ref(`s.${list}`)))
          .as('m');
      }
      // session_pages rows by their stored combination hash, each combination then named by
      // its row in attribute_combinations, written with the session (at 10M under
      // page==/pricing, 714k rows: 0.33 s, where grouping by the four values took 1.05 s).
      return d.builder
        .selectFrom(
          d.builder
            .selectFrom(source.from as 'session_pages as s')
            .select(['s.attributes_hash', sessionMetrics('s').sessions.as('n')])
            .where(where.sessions(query, 's', source))
            .groupBy('s.attributes_hash')
            .as('g'),
        )
        .innerJoin('attribute_combinations as ac', (join) =>
          join.on('ac.site_id', '=', query.site.id).onRef('ac.attributes_hash', '=', 'g.attributes_hash'),
        )
        .select([...together.map((list) => sql.ref(`ac.${list}`).as(list)), 'g.n'])
        .as('m');
    };
    const combinations = combinationsOf();
    const names = sql`(${sql.join(
      together.map((list) => sql`SELECT ${sql.lit(list)} AS list`),
      sql` UNION ALL `,
    )})`;
    const valueOf = sql<string>`CASE ${sql.ref('k.list')} ${sql.join(
      together.map((list) => sql`WHEN ${sql.lit(list)} THEN ${sql.ref(`m.${list}`)}`),
      sql` `,
    )} END`;
    groups.push(
      d.builder
        .selectFrom(combinations)
        .innerJoin(names.as('k'), (join) => join.onTrue())
        .select([
          sql.ref('k.list').as('list'),
          valueOf.as('value'),
          sql<Buffer | null>`NULL`.as('path_hash'),
          NO_REP,
          sql<number | string>`SUM(${sql.ref('m.n')})`.as('sessions'),
        ])
        .groupBy([sql.ref('k.list'), valueOf]) as TopListGroup,
    );
  }
  return { groups, pathOf };
}

/**
 * The top `limit` of each list of `groups` (TopListGroupRow, one row per list and value or page
 * hash), by sessions desc then value asc (binary order), each path list's candidates named by
 * `pathOf`.
 */
function rankedLists(
  d: SqlDialect,
  groups: TopListGroup,
  pathOf: ReadonlyMap<TopList, PathNamer>,
  limit: number,
) {
  const candidates = d.builder
    .selectFrom(groups.as('g'))
    .select([
      'g.list',
      'g.value',
      'g.path_hash',
      'g.rep',
      'g.sessions',
      sql<number>`RANK() OVER (PARTITION BY g.list ORDER BY g.sessions DESC)`.as('by_sessions'),
    ])
    .as('c');
  const hash = sql.ref('c.path_hash');
  const rep = sql.ref('c.rep');
  const value =
    pathOf.size === 0
      ? sql.ref('c.value')
      : sql`COALESCE(${sql.ref('c.value')}, CASE ${sql.ref('c.list')} ${sql.join(
          [...pathOf].map(([list, named]) => sql`WHEN ${sql.lit(list)} THEN ${named(hash, rep)}`),
          sql` `,
        )} END)`;
  const named = d.builder
    .selectFrom(candidates)
    .select(['c.list', value.as('value'), 'c.sessions'])
    .where('c.by_sessions', '<=', limit)
    .as('n');
  return d.builder
    .selectFrom(
      d.builder
        .selectFrom(named)
        .select([
          'n.list',
          'n.value',
          'n.sessions',
          sql<number>`ROW_NUMBER() OVER (PARTITION BY n.list ORDER BY n.sessions DESC, n.value ASC)`.as(
            'rank',
          ),
        ])
        .as('t'),
    )
    .select(['t.list', 't.value', 't.sessions'])
    .where('t.rank', '<=', limit)
    .orderBy('t.list')
    .orderBy('t.sessions', 'desc')
    .orderBy('t.value', 'asc');
}

export const overviewStatements = {
  /**
   * The top `rows` rows by sessions of each bucket (a site day, or a block of days) of each
   * unfiltered list over `parts` (listParts), each bucket read from TOP_ROWS_INDEXES in sessions
   * order: `part` numbers the bucket. OverviewQueries.topLists takes its candidates from them.
   */
  partTopRows(
    query: StatsQuery,
    lists: readonly TopList[],
    parts: ReadonlyArray<{ span: number; buckets: Date[] }>,
    rows: number,
  ): ReportStatement<PartTopRow> {
    return (d) => {
      let part = 0;
      const arms = lists.flatMap((list) =>
        parts.flatMap(({ span, buckets }) =>
          buckets.map((bucket) => {
            const table = listTable(list, span);
            const n = part++;
            return sql`SELECT * FROM (SELECT ${sql.lit(list)} AS list, ${sql.lit(n)} AS part, ${keyColumns(list)}, ${isPathList(list) ? sql`r.path` : sql`r.value`} AS name, r.sessions
    FROM ${sql.raw(d.tableWithIndex(table, 'r', TOP_ROWS_INDEXES[table].name))}
    WHERE ${listRows(query, list, span)} AND r.bucket = ${bucket}
    ORDER BY r.sessions DESC LIMIT ${sql.lit(rows)}) ${sql.ref(`b${n}`)}`;
          }),
        ),
      );
      return sql<PartTopRow>`${sql.join(
        arms,
        sql`
UNION ALL `,
      )}`.compile(d.builder);
    };
  },

  /**
   * Each list's candidates (attribute values, or page hashes in hex; at least one) summed over
   * every bucket of `parts`, each bucket's row read by key: a row per candidate, its key as
   * partTopRows gives it. The ranking and the pages' names are listsFromTopRows'.
   */
  candidateTotals(
    query: StatsQuery,
    candidates: ReadonlyMap<TopList, readonly string[]>,
    parts: ReadonlyArray<{ span: number; buckets: Date[] }>,
  ): ReportStatement<{
    list: TopList;
    value: string | null;
    path_hash: string | null;
    sessions: number | string;
  }> {
    return (d) => {
      // A bucket to an arm: `bucket IN (…)` with the candidates' `IN (…)` left MariaDB to read
      // every row of the list when the lists grew (limit 100 at 1M: 252k rows, 296 ms).
      const arms = [...candidates]
        .filter(([, keys]) => keys.length > 0)
        .flatMap(([list, keys]) => {
          const among = isPathList(list)
            ? sql`r.path_hash IN (${hashLiterals(keys)})`
            : sql`r.value IN (${sql.join(keys)})`;
          return parts.flatMap(({ span, buckets }) =>
            buckets.map(
              (bucket) => sql`SELECT ${sql.lit(list)} AS list, ${keyColumns(list)}, r.sessions
    FROM ${sql.raw(listTable(list, span))} r
    WHERE ${listRows(query, list, span)} AND r.bucket = ${bucket} AND ${among}`,
            ),
          );
        });
      return sql<{
        list: TopList;
        value: string | null;
        path_hash: string | null;
        sessions: number | string;
      }>`SELECT u.list, u.value, u.path_hash, SUM(u.sessions) AS sessions
FROM (${sql.join(
        arms,
        sql`
UNION ALL `,
      )}) u
GROUP BY u.list, u.value, u.path_hash`.compile(d.builder);
    };
  },

  /**
   * The top `limit` values of each of `lists` over the range's sessions, by sessions desc then
   * value asc (binary order). Sessions without pageviews have no entry or exit path.
   *
   * A path list read from its rollups is grouped by the path's 16-byte hash alone (the rollups'
   * key; a row's path is its hash's), which spares the grouping a 2,048-character column (at 1M
   * pageviews, 85 → 25 ms for one list over 28k day rows): the values that can still make the top
   * `limit` (those ranked `limit` or better by sessions alone, ties included) are then named by
   * one row of the same rollups each, and ranked by sessions and name.
   *
   * Under `page!=` one path whose rows are current (listsLessPath), each list is the site's from
   * its rollups less the path's from its session_pages rows, which carry each session's values
   * and its pages' hashes: a value's (or page hash's) sessions summed over both, the path's
   * negated, before the ranking.
   */
  topLists(
    query: StatsQuery,
    limit: number,
    lists: readonly TopList[] = TOP_LISTS,
  ): ReportStatement<{ list: TopList; value: string; sessions: number | string }> {
    return (d) => {
      const without = listsLessPath(query, lists);
      if (without === undefined) {
        const { groups, pathOf } = listGroups(d, query, lists);
        return rankedLists(d, unionAllOf(groups), pathOf, limit).compile();
      }
      // page!= one path: the site's lists less the path's, a value's or page's sessions summed
      // over both, the path's negated. A value all of whose sessions saw the path sums to 0: it
      // is no value of the lists, as the raw path has no row of it.
      const site = listGroups(d, without.site, lists);
      const path = listGroups(d, without.page, lists).groups.map(
        (group) =>
          d.builder
            .selectFrom(group.as('z'))
            .select([
              'z.list',
              'z.value',
              'z.path_hash',
              'z.rep',
              sql<number | string>`0 - ${sql.ref('z.sessions')}`.as('sessions'),
            ]) as TopListGroup,
      );
      const less = d.builder
        .selectFrom(unionAllOf([...site.groups, ...path]).as('u'))
        .select([
          'u.list',
          'u.value',
          'u.path_hash',
          sql<string | null>`MIN(${sql.ref('u.rep')})`.as('rep'),
          sql<number | string>`SUM(${sql.ref('u.sessions')})`.as('sessions'),
        ])
        .groupBy(['u.list', 'u.value', 'u.path_hash'])
        .having(sql`SUM(${sql.ref('u.sessions')})`, '>', 0) as TopListGroup;
      return rankedLists(d, less, site.pathOf, limit).compile();
    };
  },
};

@Injectable()
export class OverviewQueries {
  constructor(
    private readonly db: ReportDb,
    private readonly stats: StatsRepository,
  ) {}

  /** Session metrics by session start, pageviews by their own ts (SPEC §1 attribution). */
  async headlineTotals(query: StatsQuery): Promise<HeadlineTotals> {
    return this.stats.sessionTotalsVisitorsAndPageviews(query, [
      'bounces',
      'sessionPageviews',
      'durationSeconds',
    ]);
  }

  /**
   * The top lists: unfiltered, over whole site days, from each bucket's top rows where that
   * settles them (listsFromTopRows); the others in TOP_LIST_STATEMENTS' statements, run
   * concurrently.
   */
  async topLists(query: StatsQuery, limit: number): Promise<TopListRow[]> {
    const settled = await this.listsFromTopRows(query, limit);
    const statements = await Promise.all(
      TOP_LIST_STATEMENTS.map((lists) => lists.filter((list) => !settled.has(list)))
        .filter((lists) => lists.length > 0)
        .map((lists) => this.db.run(overviewStatements.topLists(query, limit, lists))),
    );
    return [
      ...[...settled.values()].flatMap((list) => list.top),
      ...statements.flat().map((r) => ({ list: r.list, value: r.value, sessions: Number(r.sessions) })),
    ];
  }

  /**
   * The unfiltered lists whose top `limit` the top rows of each bucket settle, by list, with the
   * most sessions a value left out could have (`bound`: 0 when none was). A bucket is
   * a site day or a block of days of the list's rollups (listParts); each gives its `rows` values
   * with the most sessions (partTopRows), and every value found in any bucket is summed over all
   * of them (candidateTotals). A value found in none has at most, in each bucket, that bucket's
   * last row's sessions when the bucket gave `rows` rows, and nothing where it gave fewer (every
   * value of it was read): its total is at most the sum of those, `bound`. So when the
   * `limit`-th candidate has more sessions than `bound` (or no bucket was cut), the candidates'
   * top `limit` is the list's; otherwise the list is left to topLists' statement. At 1M pageviews
   * the entry page list over 29 days reads ~240 rows and 38 candidates' rows instead of 30k rows.
   * The two statements read the rollups one after the other, as the overview's other statements
   * each read them at their own moment: an `aggregate` that commits in between can move a list
   * as it can move a list against the headline figures.
   */
  async listsFromTopRows(
    query: StatsQuery,
    limit: number,
    rows = topRowsPerBucket(limit),
  ): Promise<Map<TopList, { top: TopListRow[]; bound: number }>> {
    const settled = new Map<TopList, { top: TopListRow[]; bound: number }>();
    if (query.filters.length > 0 || query.tables === 'raw' || limit > TOP_ROWS_UP_TO_LIMIT) return settled;
    const lists = TOP_LISTS.filter(
      (list) => decideTable(query, 'sessions', { metrics: ['sessions'], dimension: list }).kind === 'rollup',
    );
    const parts = lists.length === 0 ? null : listParts(query);
    if (parts === null) return settled;
    const tops = await this.db.run(overviewStatements.partTopRows(query, lists, parts, rows));
    const found = new Map<
      TopList,
      { names: Map<string, string>; parts: Map<number, { rows: number; last: number }> }
    >(lists.map((list) => [list, { names: new Map(), parts: new Map() }]));
    for (const row of tops) {
      const of = found.get(row.list)!;
      of.names.set(row.path_hash ?? (row.value as string), row.name);
      const part = of.parts.get(Number(row.part)) ?? { rows: 0, last: Infinity };
      part.rows++;
      part.last = Math.min(part.last, Number(row.sessions));
      of.parts.set(Number(row.part), part);
    }
    const candidates = new Map([...found].map(([list, { names }]) => [list, [...names.keys()]]));
    // No candidate at all: no session in the range, every list empty.
    const totals = [...candidates.values()].some((keys) => keys.length > 0)
      ? await this.db.run(overviewStatements.candidateTotals(query, candidates, parts))
      : [];
    for (const list of lists) {
      const { names, parts: cut } = found.get(list)!;
      // By sessions desc, then value asc in binary order, as topLists ranks them.
      const ranked = totals
        .filter((r) => r.list === list)
        .map((r) => ({
          list,
          value: names.get(r.path_hash ?? (r.value as string))!,
          sessions: Number(r.sessions),
        }))
        .sort((a, b) => b.sessions - a.sessions || byBytes(a.value, b.value))
        .slice(0, limit);
      const bound = leftOutBound(cut.values(), rows);
      const top = settledTop(ranked, limit, bound);
      if (top !== undefined) settled.set(list, { top, bound });
    }
    return settled;
  }
}
