import { Expression, sql, SqlBool } from 'kysely';
import type { StatsQuery } from '../query/stats-query';

/** A column of a table alias, quoted by the builder. */
export const col = (alias: string, column: string) => sql.ref(`${alias}.${column}`);

export type HitType = 'pageview' | 'event' | 'purchase';

/**
 * The WHERE builders: one per source table, from the query's site, range and (later) filters.
 * Every report selects its rows through these, so "the sessions of the range" is written once.
 * Attribution (SPEC §1): sessions belong to the range holding their start; hits and orders to
 * the range holding their own ts.
 */
export const where = {
  sessions(query: StatsQuery, alias = 's'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'started_at')} >= ${query.range.startUtc} AND ${col(alias, 'started_at')} < ${query.range.endUtc})`;
  },

  hits(query: StatsQuery, alias = 'h', type?: HitType): Expression<SqlBool> {
    const ofType = type === undefined ? sql`` : sql` AND ${col(alias, 'type')} = ${sql.lit(type)}`;
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id}${ofType} AND ${col(alias, 'ts')} >= ${query.range.startUtc} AND ${col(alias, 'ts')} < ${query.range.endUtc})`;
  },

  orders(query: StatsQuery, alias = 'o'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'ts')} >= ${query.range.startUtc} AND ${col(alias, 'ts')} < ${query.range.endUtc})`;
  },

  /**
   * The session rollup's rows of one attribute for the query: whole 15-minute buckets of the
   * session start inside the range (decideTable only picks the rollup when the range's bounds
   * are bucket bounds).
   */
  sessionRollups(query: StatsQuery, dimension: string, alias = 'r'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** The entry/exit page rollup's rows of one list for the query (as sessionRollups). */
  sessionPathRollups(query: StatsQuery, dimension: string, alias = 'p'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'dimension')} = ${sql.lit(dimension)} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** The pageview rollup's rows for the query: whole 15-minute buckets of the hit ts in the range. */
  hitRollups(query: StatsQuery, alias = 'r'): Expression<SqlBool> {
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${query.site.id} AND ${col(alias, 'bucket')} >= ${query.range.startUtc} AND ${col(alias, 'bucket')} < ${query.range.endUtc})`;
  },

  /** Live hits: stamped within [since, until], both inclusive (realtime windows end at "now"). */
  liveHits(siteId: number, since: Date, until: Date, alias = 'h', type?: HitType): Expression<SqlBool> {
    const ofType = type === undefined ? sql`` : sql` AND ${col(alias, 'type')} = ${sql.lit(type)}`;
    return sql<SqlBool>`(${col(alias, 'site_id')} = ${siteId}${ofType} AND ${col(alias, 'ts')} >= ${since} AND ${col(alias, 'ts')} <= ${until})`;
  },
};
