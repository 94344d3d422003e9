import type { SqlDialect } from '@app/db/dialect';
import { Expression, RawBuilder, sql } from 'kysely';
import { OffsetSegment, offsetSegments, ReportRange } from '../date-range';

/**
 * A UTC DATETIME column turned into the report timezone's wall-clock time, exact across DST
 * changes: the zone's offsets over the range become a CASE on the instant, so the database
 * needs no time-zone tables.
 */
export function localTimeSql(
  dialect: SqlDialect,
  column: Expression<unknown>,
  range: ReportRange,
): RawBuilder<Date> {
  return shiftBySegments(dialect, column, offsetSegments(range.timezone, range.startUtc, range.endUtc));
}

export function shiftBySegments(
  dialect: SqlDialect,
  column: Expression<unknown>,
  segments: OffsetSegment[],
): RawBuilder<Date> {
  if (segments.length <= 1) {
    return dialect.addSeconds(column, sql.lit(Math.trunc(segments[0]?.offsetSeconds ?? 0)));
  }
  const whens = segments
    .slice(0, -1)
    .map((s) => sql`WHEN ${column} < ${s.endUtc} THEN ${Math.trunc(s.offsetSeconds)}`);
  const last = Math.trunc(segments[segments.length - 1].offsetSeconds);
  return dialect.addSeconds(column, sql`(CASE ${sql.join(whens, sql` `)} ELSE ${sql.lit(last)} END)`);
}

/** The local calendar date (`YYYY-MM-DD`) of a UTC DATETIME column in the report timezone. */
export function localDateSql(
  dialect: SqlDialect,
  column: Expression<unknown>,
  range: ReportRange,
): RawBuilder<string> {
  return dialect.dateOf(localTimeSql(dialect, column, range));
}
