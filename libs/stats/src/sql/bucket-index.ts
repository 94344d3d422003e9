import type { SqlDialect } from '@app/db/dialect';
import type { Expression, RawBuilder } from 'kysely';
import type { Bucket } from '../date-range';

/**
 * SQL: the 0-based index of the bucket (from buckets()) that holds a UTC DATETIME column.
 * Hour buckets across DST changes, 30/45-minute zones and clipped weeks or months all cost the
 * same. Rows must lie within the buckets (filter on the range first). Bucket starts fall on
 * whole seconds in every zone.
 */
export function bucketIndex(
  dialect: SqlDialect,
  column: Expression<unknown>,
  list: Bucket[],
): RawBuilder<number> {
  if (list.length === 0) throw new Error('bucketIndex needs at least one bucket');
  return dialect.bucketIndex(
    column,
    list.map((b) => Math.floor(b.startUtc.getTime() / 1000)),
  );
}
