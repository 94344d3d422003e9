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
