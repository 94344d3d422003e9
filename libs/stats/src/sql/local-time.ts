import type { SqlDialect } from '@app/db/dialect';
import { OffsetSegment, offsetSegments, ReportRange } from '../date-range';

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

/**
 * A UTC DATETIME column turned into the report timezone's wall-clock time, exact across DST
 * changes: the zone's offsets over the range become a CASE on the instant, so the database
 * needs no time-zone tables.
 */
export function localTimeSql(dialect: SqlDialect, column: string, range: ReportRange): SqlFragment {
  const segments = offsetSegments(range.timezone, range.startUtc, range.endUtc);
  return shiftBySegments(dialect, column, segments);
}

export function shiftBySegments(dialect: SqlDialect, column: string, segments: OffsetSegment[]): SqlFragment {
  if (segments.length <= 1) {
    const offset = segments[0]?.offsetSeconds ?? 0;
    return { sql: dialect.addSeconds(column, String(Math.trunc(offset))), params: [] };
  }
  const params: unknown[] = [];
  const whens = segments.slice(0, -1).map((s) => {
    params.push(s.endUtc, Math.trunc(s.offsetSeconds));
    return `WHEN ${column} < ? THEN ?`;
  });
  const last = Math.trunc(segments[segments.length - 1].offsetSeconds);
  return { sql: dialect.addSeconds(column, `(CASE ${whens.join(' ')} ELSE ${last} END)`), params };
}

/** The local calendar date (`YYYY-MM-DD`) of a UTC DATETIME column in the report timezone. */
export function localDateSql(dialect: SqlDialect, column: string, range: ReportRange): SqlFragment {
  const local = localTimeSql(dialect, column, range);
  return { sql: dialect.dateOf(local.sql), params: local.params };
}
