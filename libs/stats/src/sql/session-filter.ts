import { Expression, RawBuilder, sql, SqlBool } from 'kysely';
import { GoalDefinition, hitsOfSession, sessionConverted } from '../conversions';
import { pageviewPathIs, textMatch } from '../definitions';
import type { FilterCondition, FilterValue } from '../query/filters';
import { col } from './col';

/** A parsed condition, with the site's goals it names when it is on `goal` (StatsQueryParser resolves them). */
export interface StatsFilter extends FilterCondition {
  goals?: readonly GoalDefinition[];
}

/** ` AND condition`, or nothing when there is no condition: unfiltered SQL stays as it was. */
export function andAlso(condition: RawBuilder<SqlBool> | null): RawBuilder<unknown> {
  return condition === null ? sql`` : sql` AND ${condition}`;
}

/** Any of the values matches `column` (SPEC §3: the values of a condition are alternatives). */
function anyValue(column: Expression<unknown>, values: readonly FilterValue[]): RawBuilder<SqlBool> {
  const exact = values.filter((v) => !v.prefix).map((v) => v.text);
  const parts = values.filter((v) => v.prefix).map((v) => textMatch(column, v.text, true));
  if (exact.length > 0) parts.unshift(sql<SqlBool>`${column} IN (${sql.join(exact)})`);
  return sql<SqlBool>`(${sql.join(parts, sql` OR `)})`;
}

/** The `==` side of a condition over the sessions row `s`: true exactly for the sessions it selects. */
function selects(filter: StatsFilter, s: string): RawBuilder<SqlBool> {
  switch (filter.dimension) {
    case 'channel':
    case 'source':
    case 'country':
    case 'device':
    case 'browser':
      // Stored as the session reads it: a missing attribute is the word `(unknown)` / `(direct)`.
      return anyValue(col(s, filter.dimension), filter.values);
    case 'entry_page':
    case 'exit_page': {
      const column = col(s, filter.dimension === 'entry_page' ? 'entry_path' : 'exit_path');
      // A session without pageviews has no entry or exit page: it fails ==, and so passes !=.
      return sql<SqlBool>`(${column} IS NOT NULL AND ${anyValue(column, filter.values)})`;
    }
    case 'page': {
      // Over step_key (the path cut to its first 255 characters), which the session's hits'
      // index carries: a session's hits are tested without reading them (migration 1766800000000).
      const paths = filter.values.map((v) => pageviewPathIs('fp', v.text, v.prefix));
      return sql<SqlBool>`EXISTS (SELECT 1 FROM ${hitsOfSession('fp')} WHERE fp.site_id = ${col(s, 'site_id')} AND fp.session_id = ${col(s, 'session_id')} AND fp.type = 'pageview' AND (${sql.join(paths, sql` OR `)}))`;
    }
    case 'goal':
      if (!filter.goals) throw new Error('a goal filter reached SQL without its goals resolved');
      return sessionConverted(s, [...filter.goals]);
  }
}

/**
 * The one place that turns a query's filters into the sessions it selects (SPEC §3): a
 * condition over the sessions row `s`, every condition holding. With no filters, every session.
 */
export function sessionSelected(filters: readonly StatsFilter[], s: string): RawBuilder<SqlBool> | null {
  if (filters.length === 0) return null;
  const each = filters.map((f) => (f.operator === '==' ? selects(f, s) : sql<SqlBool>`NOT ${selects(f, s)}`));
  return sql<SqlBool>`(${sql.join(each, sql` AND `)})`;
}

/**
 * The same selection for rows that carry a session id (hits, orders) aliased `row`: their
 * session is selected. A row whose session `aggregate` has not derived yet belongs to no
 * selected session (as it has no attributes yet).
 */
export function rowOfSelectedSession(
  filters: readonly StatsFilter[],
  row: string,
): RawBuilder<SqlBool> | null {
  if (filters.length === 0) return null;
  return sql<SqlBool>`EXISTS (SELECT 1 FROM sessions fs WHERE fs.site_id = ${col(row, 'site_id')} AND fs.session_id = ${col(row, 'session_id')}${andAlso(sessionSelected(filters, 'fs'))})`;
}

/**
 * The selection over a rollup's `value` column, for the rollup of the one session attribute
 * every condition is on (decideTable picks the rollup only then).
 */
export function rollupValueSelected(
  filters: readonly StatsFilter[],
  value: Expression<unknown>,
): RawBuilder<SqlBool> | null {
  if (filters.length === 0) return null;
  const each = filters.map((f) =>
    f.operator === '==' ? anyValue(value, f.values) : sql<SqlBool>`NOT ${anyValue(value, f.values)}`,
  );
  return sql<SqlBool>`(${sql.join(each, sql` AND `)})`;
}
