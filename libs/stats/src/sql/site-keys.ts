import { RawBuilder, sql, SqlBool } from 'kysely';

/**
 * `((t.site_id = ? AND t.<column> IN (…)) OR …)` over `sites` (site id → keys of `column`, a
 * session's by default): one index range per site on both engines, so that `aggregate` reads or
 * writes the sessions of many sites in one statement. Each list stays under the caller's bound
 * (MAX_IN_LIST), and so does the number of sites: SQLite refuses an expression nested 1,000 deep.
 * `alias`: the table's alias, none for a table named as it is.
 */
export function siteKeysWhere(
  sites: ReadonlyMap<number, readonly string[]>,
  alias?: string,
  column = 'session_id',
): RawBuilder<SqlBool> {
  const ref = (c: string) => sql.ref(alias ? `${alias}.${c}` : c);
  const listed = [...sites].filter(([, keys]) => keys.length > 0);
  if (listed.length === 0) return sql<SqlBool>`(1 = 0)`;
  return sql<SqlBool>`(${sql.join(
    listed.map(
      ([siteId, keys]) => sql`(${ref('site_id')} = ${siteId} AND ${ref(column)} IN (${sql.join([...keys])}))`,
    ),
    sql` OR `,
  )})`;
}
