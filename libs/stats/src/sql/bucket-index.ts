import type { SqlDialect } from '@app/db/dialect';
import type { Bucket } from '../date-range';
import type { SqlFragment } from './local-time';

/**
 * SQL: the 0-based index of the bucket (from buckets()) that holds a UTC DATETIME column.
 * INTERVAL() binary-searches the sorted bucket starts, so hour buckets across DST changes,
 * 30/45-minute zones and clipped weeks or months all cost the same. Rows must lie within the
 * buckets (filter on the range first). Bucket starts fall on whole seconds in every zone.
 */
export function bucketIndexSql(dialect: SqlDialect, column: string, list: Bucket[]): SqlFragment {
  if (list.length === 0) throw new Error('bucketIndexSql needs at least one bucket');
  const starts = list.map((b) => Math.floor(b.startUtc.getTime() / 1000));
  return {
    sql: `(INTERVAL(${dialect.epochSeconds(column)}, ${starts.map(() => '?').join(', ')}) - 1)`,
    params: starts,
  };
}
