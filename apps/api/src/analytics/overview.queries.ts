import {
  col,
  combinationSelected,
  decideTable,
  ReportDb,
  ReportStatement,
  rollupParts,
  rollupSpanParts,
  selectsFewCombinations,
  unionAllOf,
  sessionMetrics,
  sessionRollupMetrics,
  StatsQuery,
  StatsRepository,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { Expression, SelectQueryBuilder, sql, SqlBool } from 'kysely';

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

/** The rows of one span of a span rollup (rollupSpanParts). */
const ofSpan = (span: number, alias: string) => sql<SqlBool>`${sql.ref(`${alias}.span`)} = ${span}`;

export const overviewStatements = {
  /**
   * The top `limit` values of each of `lists` over the range's sessions, by sessions desc then
   * value asc (binary order). Sessions without pageviews have no entry or exit path.
   *
   * A path list read from its rollups is grouped by the path's 16-byte hash alone (the rollups'
   * key; a row's path is its hash's), which spares the grouping a 2,048-character column (at 1M
   * pageviews, 85 → 25 ms for one list over 28k day rows): the values that can still make the top
   * `limit` (those ranked `limit` or better by sessions alone, ties included) are then named by
   * one row of the same rollups each, and ranked by sessions and name.
   */
  topLists(
    query: StatsQuery,
    limit: number,
    lists: readonly TopList[] = TOP_LISTS,
  ): ReportStatement<{ list: TopList; value: string; sessions: number | string }> {
    return (d) => {
      /** Per rolled-up path list: the path of `hash` from the first part that holds it. */
      const pathOf = new Map<
        TopList,
        (hash: Expression<unknown>, rep: Expression<unknown>) => Expression<string>
      >();
      const tableOf = new Map(
        lists.map((list) => [
          list,
          decideTable(query, 'sessions', { metrics: ['sessions'], dimension: list }),
        ]),
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
            const parts = rollupParts(
              query,
              'session_attribute_rollups',
              'session_attribute_day_rollups',
            ).map((part) =>
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
            const parts = rollupSpanParts(
              query,
              'session_path_rollups',
              'session_path_day_rollups',
              'session_path_span_rollups',
            );
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
            const parts = rollupSpanParts(
              query,
              'session_rollups',
              'session_day_rollups',
              'session_span_rollups',
            ).map((part) =>
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
          if ((list === 'entry_path' || list === 'exit_path') && combinationSelected(query, 's') !== null) {
            // Under conditions on attributes: the selected sessions' pages by their hash, read from
            // the combinations' index alone (where.sessions), and each candidate named by one of
            // its sessions, read by key (at 10M pageviews under three attribute conditions, ~100k
            // sessions: 0.53–0.61 s grouped by the page itself, each session's row read by key).
            const hashOf = list === 'entry_path' ? 'entry_hash' : 'exit_hash';
            pathOf.set(
              list,
              (_, rep) =>
                sql<string>`(${d.builder
                  .selectFrom('sessions as n')
                  .select(`n.${list}`)
                  .where('n.site_id', '=', query.site.id)
                  .where(sql<SqlBool>`${col('n', 'session_id')} = ${rep}`)})`,
            );
            return d.builder
              .selectFrom('sessions as s')
              .select([
                sql.lit(list).as('list'),
                sql<string | null>`NULL`.as('value'),
                sql.ref(`s.${hashOf}`).as('path_hash'),
                sql<string>`MIN(${col('s', 'session_id')})`.as('rep'),
                sessionMetrics('s').sessions.as('sessions'),
              ])
              .where(where.sessions(query, 's'))
              .where(col('s', hashOf), 'is not', null)
              .groupBy(`s.${hashOf}`) as TopListGroup;
          }
          return d.builder
            .selectFrom('sessions as s')
            .select([
              sql.lit(list).as('list'),
              sql.ref(`s.${list}`).as('value'),
              sql<Buffer | null>`NULL`.as('path_hash'),
              NO_REP,
              sessionMetrics('s').sessions.as('sessions'),
            ])
            .where(where.sessions(query, 's'))
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
        const combinations =
          together === rawAttributes
            ? d.builder
                .selectFrom('sessions as s')
                .select([
                  ...together.map((list) => sql.ref(`s.${list}`).as(list)),
                  sessionMetrics('s').sessions.as('n'),
                ])
                .where(where.sessions(query, 's'))
                .groupBy(together.map((list) => sql.ref(`s.${list}`)))
                .as('m')
            : unionAllOf(
                rollupParts(query, 'session_attribute_rollups', 'session_attribute_day_rollups').map((part) =>
                  d.builder
                    .selectFrom(
                      where.attributeRollupPart(
                        part.query,
                        part.table,
                        'a',
                      ) as 'session_attribute_rollups as a',
                    )
                    .select([
                      ...together.map((list) => sql.ref(`a.${list}`).as(list)),
                      sessionRollupMetrics('a').sessions.as('n'),
                    ])
                    .where(where.sessionAttributeRollups(part.query, 'a'))
                    .groupBy(together.map((list) => sql.ref(`a.${list}`))),
                ),
              ).as('m');
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
      const candidates = d.builder
        .selectFrom(unionAllOf(groups).as('g'))
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
        .orderBy('t.value', 'asc')
        .compile();
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
    const [sessions, pageviews] = await Promise.all([
      this.stats.sessionTotalsAndVisitors(query, ['bounces', 'sessionPageviews', 'durationSeconds']),
      this.stats.pageviewTotals(query, ['pageviews']),
    ]);
    return { ...sessions, pageviews: Number(pageviews.pageviews) };
  }

  /** The top lists, in TOP_LIST_STATEMENTS' statements run concurrently. */
  async topLists(query: StatsQuery, limit: number): Promise<TopListRow[]> {
    const statements = await Promise.all(
      TOP_LIST_STATEMENTS.map((lists) => this.db.run(overviewStatements.topLists(query, limit, lists))),
    );
    return statements.flat().map((r) => ({ list: r.list, value: r.value, sessions: Number(r.sessions) }));
  }
}
