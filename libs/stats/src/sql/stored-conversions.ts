import { RawBuilder, sql, SqlBool } from 'kysely';
import { GoalDefinition, sessionConverted } from '../conversions';
import type { SessionAttribute } from '../definitions';
import type { StatsQuery } from '../query/stats-query';
import { col } from './col';
import { settled } from './pageviews-by-session';
import { sessionPagesPaths, settledSessionsScope } from './session-pages';
import { andAlso, queuedSessionSelected, settledSessionSelected, storedGoalExists } from './session-filter';

/** 1 where `condition` holds, else 0. */
export const flag = (condition: RawBuilder<SqlBool>) => sql`CASE WHEN ${condition} THEN 1 ELSE 0 END`;

/** Rows `alias` (sessions, or stored goals by their session's start) that started in the query's range. */
export const rangeStarts = (query: StatsQuery, alias = 's') =>
  sql<SqlBool>`${col(alias, 'started_at')} >= ${query.range.startUtc} AND ${col(alias, 'started_at')} < ${query.range.endUtc}`;

/** What a row of storedAndQueuedRows counts: the session (optional), "converted", and each goal. */
export type ConversionColumns = (row: {
  session?: RawBuilder<unknown>;
  converted: RawBuilder<unknown>;
  perGoal: (goal: GoalDefinition) => RawBuilder<unknown>;
}) => RawBuilder<unknown>;

/** The columns of a row of storedAndQueuedRows, beyond `converted`. */
export interface ConversionRowShape {
  /**
   * Rows summed per group of sessions: `started_at` (the earliest start of the group) and
   * `value` (the attribute `value` of the row's session `s`), each part of the rows grouped by
   * that value and, when given, by `key` of the session's start (a report bucket), the counts
   * summed. MariaDB materialises a `UNION ALL` with each `VARCHAR(255)` at its full width (1 KB
   * a row): a row a session spilled its 64 MB in-memory temporary table from ~65k sessions on.
   */
  grouped?: { value: SessionAttribute; key?: (started: RawBuilder<unknown>) => RawBuilder<unknown> };
  /** `session`: how many selected sessions the row counts. */
  session: boolean;
  /** `goal_0`, `goal_1`, …: whether the row counts a conversion of each goal. */
  perGoal: boolean;
}

/**
 * Rows over the settled sessions (`settledRows`, given the columns to select, over a sessions
 * row `s`) and over the queued sessions of the range that `queuedSelected` selects. A queued
 * session's row and stored goals may lag its hits, so each one counts as the raw path counts
 * it: converted by its hits stamped from the range start (sessionConverted, as
 * convertedSessionsTable), selected as the raw path selects it (queuedSessionSelected).
 */
export function storedAndQueuedRows(
  query: StatsQuery,
  goals: GoalDefinition[],
  shape: ConversionRowShape,
  settledRows: (columns: ConversionColumns) => RawBuilder<unknown>,
  queuedSelected: RawBuilder<SqlBool> | null,
): RawBuilder<unknown> {
  const { grouped } = shape;
  const count = (n: RawBuilder<unknown>) => (grouped === undefined ? n : sql`SUM(${n})`);
  const columns: ConversionColumns = (row) =>
    sql.join([
      ...(grouped === undefined
        ? []
        : [sql`MIN(s.started_at) AS started_at`, sql`${sql.ref(`s.${grouped.value}`)} AS value`]),
      ...(shape.session ? [sql`${count(row.session ?? sql`1`)} AS session`] : []),
      sql`${count(row.converted)} AS converted`,
      ...(shape.perGoal ? goals.map((g, i) => sql`${count(row.perGoal(g))} AS ${sql.ref(`goal_${i}`)}`) : []),
    ]);
  const groupBy =
    grouped === undefined
      ? sql``
      : sql` GROUP BY ${sql.join([
          ...(grouped.key === undefined ? [] : [grouped.key(sql.ref('s.started_at'))]),
          sql.ref(`s.${grouped.value}`),
        ])}`;
  const since = query.range.startUtc;
  return sql`${settledRows(columns)}${groupBy}
  UNION ALL
  SELECT ${columns({
    session: sql`1`,
    converted: flag(sessionConverted('s', goals, since)),
    perGoal: (g) => flag(sessionConverted('s', [g], since)),
  })}
    FROM dirty_sessions q JOIN sessions s ON s.site_id = q.site_id AND s.session_id = q.session_id
    WHERE q.site_id = ${query.site.id} AND ${rangeStarts(query)}${andAlso(queuedSelected)}${groupBy}`;
}

/**
 * The converted sessions of the range that the query's filters select, from the goals stored
 * for the settled sessions (session_goals; the goals rolled up: storedConversionsMayAnswer):
 * each stored goal's row of a session that started in the range (by the session's start stored
 * with it: ix_session_goals_site_start), its session read by key (`orderedJoin`) and tested for
 * the filters, counts for its goal, and for "converted" at the session's first stored goal. A
 * settled session's stored start is its row's (aggregate writes both), tested on both, or on
 * the stored start alone where the session's row is not read (ungrouped under `page==` rows
 * that answer: the selection is then a look-up of its row there by the stored key). The
 * queued sessions as storedAndQueuedRows reads them. Converted sessions are a few of the
 * range's: at 10M pageviews under country==US the raw statement, which joins every selected
 * session of the range to its goal hits, ran past the 10-s budget on every request
 * (BENCHMARKS.md run AW). Conversions sum the rows; the breakdown's conv_rate groups them by
 * the session's start and attribute; under conditions on attributes only, both read
 * goal_attribute_rollups instead (goalAttributeRollupsMayAnswer).
 */
export function storedConvertedRows(
  query: StatsQuery,
  goals: GoalDefinition[],
  orderedJoin: string,
  shape: Omit<ConversionRowShape, 'session'>,
): RawBuilder<unknown> {
  const firstStored = flag(sql<SqlBool>`NOT ${storedGoalExists('b', { before: 'b' })}`);
  const scope = settledSessionsScope(query);
  // Under `page==` paths whose rows answer (sessionPagesPaths), the selection is the session's
  // row there, looked up by the session's key (rowOfSelectedSession), which the stored goal's row
  // carries with the session's start: ungrouped, the session's row is not read at all (at 10M
  // pageviews under page!=/pricing, 347k look-ups of sessions, ~0.6 s of the path's 1.4 s).
  const byGoalRow = shape.grouped === undefined && sessionPagesPaths(scope) !== undefined;
  const settledRows = (columns: ConversionColumns) => {
    const selected = columns({
      converted: firstStored,
      perGoal: (g) => flag(sql<SqlBool>`b.goal_id = ${g.id}`),
    });
    if (byGoalRow) {
      return sql`SELECT ${selected}
    FROM session_goals b
    WHERE b.site_id = ${query.site.id} AND ${rangeStarts(query, 'b')}
      AND ${settled('b')}${andAlso(settledSessionSelected(scope, 'b'))}`;
    }
    return sql`SELECT ${selected}
    FROM session_goals b ${sql.raw(orderedJoin)} sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id
    WHERE b.site_id = ${query.site.id} AND ${rangeStarts(query, 'b')} AND ${rangeStarts(query)}
      AND ${settled('s')}${andAlso(settledSessionSelected(scope, 's'))}`;
  };
  return storedAndQueuedRows(
    query,
    goals,
    { ...shape, session: false },
    settledRows,
    queuedSessionSelected(query, 's'),
  );
}
