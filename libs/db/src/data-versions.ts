import type { EntityManager } from 'typeorm';
import type { SqlDialect } from './dialect';

/**
 * Bumps the data version of `siteIds` inside the caller's transaction: every writer of report
 * data (an import batch, an aggregation chunk) calls this, so a version changes whenever the
 * answer to some report of the site may change, and commits with the data.
 */
export async function bumpDataVersions(
  em: EntityManager,
  dialect: SqlDialect,
  siteIds: Iterable<number>,
  now = new Date(),
): Promise<void> {
  const sites = [...new Set(siteIds)].sort((a, b) => a - b);
  if (sites.length === 0) return;
  await em.query(
    dialect.upsertIncrement(
      'site_data_versions',
      ['site_id', 'version', 'changed_at'],
      'version',
      sites.length,
    ),
    sites.flatMap((siteId) => [siteId, now]),
  );
}

/** The columns of a site's data version, as dataVersionColumns selects them. */
export interface DataVersionRow {
  data: number | string | null;
  goals: number | string;
  last_goal: number | string;
  events: number | string;
  last_event: number | string;
}

/**
 * What a site's reports are computed from, as scalar subqueries of the site `siteId` (an SQL
 * expression of the outer query, such as `s.id`): the data version that imports and
 * aggregation bump, and the count and newest id of the goals and of the registered events
 * (created and removed by the CLI or an operator, which bump nothing). The one definition: the
 * report cache reads it on its own (replicas) or inside the key lookup (one statement).
 */
export function dataVersionColumns(siteId: string): string {
  if (!/^[a-z_]+\.[a-z_]+$/.test(siteId)) throw new Error(`not a column reference: ${siteId}`);
  return [
    `(SELECT v.version FROM site_data_versions v WHERE v.site_id = ${siteId}) AS data`,
    `(SELECT COUNT(*) FROM goals g WHERE g.site_id = ${siteId}) AS goals`,
    `(SELECT COALESCE(MAX(g.id), 0) FROM goals g WHERE g.site_id = ${siteId}) AS last_goal`,
    `(SELECT COUNT(*) FROM registered_events e WHERE e.site_id = ${siteId}) AS events`,
    `(SELECT COALESCE(MAX(e.id), 0) FROM registered_events e WHERE e.site_id = ${siteId}) AS last_event`,
  ].join(', ');
}

/** The data version as one comparable string (a site without a version row is at 0). */
export function formatDataVersion(row: DataVersionRow): string {
  return `${row.data ?? 0}.${row.goals}:${row.last_goal}.${row.events}:${row.last_event}`;
}
