import type { SqlDialect } from '@app/db';
import {
  andAlso,
  ANY_GOAL,
  ConversionColumns,
  ConversionGoals,
  conversionRollupsMayAnswer,
  conversionTail,
  convertedSessionsTable,
  decideTable,
  flag,
  goalAttributeRollupsMayAnswer,
  GoalDefinition,
  ReportDb,
  rangeStarts,
  ReportStatement,
  rollupParts,
  RollupPart,
  rowLess,
  PageComplement,
  sessionMetrics,
  sessionPagesComplement,
  sessionsSource,
  sessionSelected,
  settled,
  sharedStatements,
  StatsQuery,
  StoredGoalSelection,
  storedGoalExists,
  storedGoalSelection,
  storedConversionsMayAnswer,
  storedGoalsMayAnswer,
  storedAndQueuedRows,
  storedConvertedRows,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { Expression, RawBuilder, sql, SqlBool } from 'kysely';

export interface ConversionCounts {
  sessions: number;
  convertedSessions: number;
  /** Per goal, in the order the goals were given. */
  goalConversions: number[];
}

/**
 * The sums `sessions` (with `withSessions`), `converted` and `goal_<i>` over the rows of
 * storedAndQueuedRows.
 */
function sums(
  goals: GoalDefinition[],
  rows: RawBuilder<unknown>,
  withSessions: boolean,
): RawBuilder<Record<string, number | string>> {
  const names = [...(withSessions ? ['session'] : []), 'converted', ...goals.map((_, i) => `goal_${i}`)];
  const columns = sql.join(
    names.map(
      (c) => sql`COALESCE(SUM(${sql.ref(`x.${c}`)}), 0) AS ${sql.ref(c === 'session' ? 'sessions' : c)}`,
    ),
  );
  return sql`SELECT ${columns} FROM (
  ${rows}
) x`;
}

/**
 * The sessions of a rollup's rows over the parts of a range (rollupParts: day rows, 15-minute
 * rows at the edges), each part a scalar subquery of its rows that `selected` keeps, added.
 */
function sessionsOver(
  d: SqlDialect,
  parts: readonly RollupPart<string>[],
  alias: string,
  selected: (part: StatsQuery) => Expression<SqlBool>,
): RawBuilder<unknown> {
  return sql.join(
    parts.map(
      (part) =>
        sql`(${d.builder
          .selectFrom(`${part.table} as ${alias}` as 'goal_rollups as g')
          .select(sql<number>`COALESCE(SUM(${sql.raw(alias)}.sessions), 0)`.as('n'))
          .where(selected(part.query))})`,
    ),
    sql` + `,
  );
}

/** The rollups' converted sessions and each goal's (sums in SQL), plus the tail's changes. */
function rolledUpWithTail(
  d: SqlDialect,
  goals: GoalDefinition[],
  tail: RawBuilder<unknown>,
  converted: RawBuilder<unknown>,
  perGoal: (goal: GoalDefinition) => RawBuilder<unknown>,
) {
  return d.builder
    .selectFrom(
      sql`(SELECT COALESCE(SUM(x.converted), 0) AS converted${sql.join(
        goals.map((_, i) => sql`, COALESCE(SUM(${sql.ref(`x.goal_${i}`)}), 0) AS ${sql.ref(`goal_${i}`)}`),
        sql``,
      )} FROM (${tail}) x)`.as('t'),
    )
    .select([
      sql<number | string>`${converted} + t.converted`.as('converted'),
      ...goals.map((g, i) => sql<number | string>`${perGoal(g)} + ${sql.ref(`t.goal_${i}`)}`.as(`goal_${i}`)),
    ]);
}

/** rolledUpConversionCounts' statement, uncompiled. */
function rolledUpCounts(d: SqlDialect, query: StatsQuery, goals: GoalDefinition[]) {
  const tail = conversionTail(query, goals);
  if (query.filters.length > 0) {
    const parts = rollupParts(query, 'goal_attribute_rollups', 'goal_attribute_day_rollups');
    const sessionsOf = (goalId: number) =>
      sessionsOver(
        d,
        parts,
        'g',
        (part) => sql<SqlBool>`g.goal_id = ${goalId} AND ${where.sessionAttributeRollups(part, 'g')}`,
      );
    return rolledUpWithTail(d, goals, tail, sessionsOf(ANY_GOAL), (g) => sessionsOf(g.id));
  }
  // Whole site days from the day rows (one a channel and day), the rest from the 15-minute
  // rows: at 10M pageviews the 15-minute rows of a 30-day range were ~23k of the ~28k rows
  // this statement read (BENCHMARKS.md run AR).
  const converted = sessionsOver(
    d,
    rollupParts(query, 'converted_rollups', 'converted_day_rollups'),
    'r',
    (part) => where.sessionRollups(part, 'channel', 'r'),
  );
  // Each goal's rows likewise: ~2,900 15-minute rows a goal over 30 days at 10M pageviews.
  const goalParts = rollupParts(query, 'goal_rollups', 'goal_day_rollups');
  const perGoal = (g: GoalDefinition) =>
    sessionsOver(d, goalParts, 'g', (part) => where.goalRollups(part, g.id, 'g'));
  return rolledUpWithTail(d, goals, tail, converted, perGoal);
}

/** storedConvertedCounts' statement, uncompiled. */
function storedCounts(d: SqlDialect, query: StatsQuery, goals: GoalDefinition[]) {
  return sums(goals, storedConvertedRows(query, goals, d.orderedJoin, { perGoal: true }), false);
}

export const conversionsStatements = {
  /**
   * Over the sessions that started in the range: how many there are, how many converted any
   * goal, and how many converted each goal, in one pass over their goal-matching hits. A session
   * converts with any of its hits, including hits after the range end: the conversion belongs
   * to the range of the session start (SPEC §1).
   */
  conversionCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    decideTable(query, 'sessions');
    return (d) => {
      const converted = convertedSessionsTable(goals, query);
      const source = sessionsSource(query, 's');
      return d.builder
        .selectFrom(source.from as 'sessions as s')
        .leftJoin(sql`(${converted})`.as('c'), (j) =>
          j.on(sql<SqlBool>`c.session_id = ${sql.ref('s.session_id')}`),
        )
        .select([
          sessionMetrics('s').sessions.as('sessions'),
          sql<number | string>`COUNT(c.session_id)`.as('converted'),
          ...goals.map((_, i) =>
            sql<number | string>`COALESCE(SUM(${sql.ref(`c.goal_${i}`)}), 0)`.as(`goal_${i}`),
          ),
        ])
        .where(where.sessions(query, 's', source))
        .compile();
    };
  },

  /**
   * The same counts of converted sessions from the conversion rollups (when
   * conversionRollupsMayAnswer): sessions that converted any goal (one attribute's rows of
   * converted_rollups, and of converted_day_rollups for whole site days, add up to them all) and
   * each goal (goal_day_rollups for whole site days, goal_rollups at the edges) by bucket of the
   * session start, plus the change the queued sessions bring (conversionTail). Under
   * conditions on session attributes (goalAttributeRollupsMayAnswer), both from the rows of
   * the selected combinations of goal_attribute_rollups (and its day rows), goal 0 for any goal;
   * the tail of the queued sessions the conditions select.
   */
  rolledUpConversionCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    return (d) => rolledUpCounts(d, query, goals).compile();
  },

  /**
   * The same counts over the sessions of the range that `selection` counts (storedGoalSelection:
   * every condition on `goal`, the goals rolled up), from the goals stored for them
   * (session_goals). Each settled session of the range that converted a base goal is read from
   * that goal's rows of the range (by the start stored with them, as storedConvertedRows reads
   * them; at its first base goal, when it converted several), tested for the other
   * conditions on its own rows, and joined to all its rows: one row per goal it converted, so
   * a session counts once (at its base goal's row), converted (it converted a base goal) and
   * for each goal it converted. The queued sessions as storedAndQueuedRows reads them. At 10M
   * pageviews the raw statement reads every goal-matching hit of the range (conversions under
   * goal==3: 6.8 s, half the requests 503 in BENCHMARKS.md run AV); this one the base goals'
   * sessions.
   */
  storedGoalConversionCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
    selection: StoredGoalSelection,
  ): ReportStatement<Record<string, number | string>> {
    return (d) => {
      const firstBase =
        selection.base.length === 1
          ? sql``
          : sql` AND NOT ${storedGoalExists('b', { goalIds: selection.base, before: 'b' })}`;
      const atBase = flag(sql<SqlBool>`sg.goal_id = b.goal_id`);
      const settledRows = (columns: ConversionColumns) => sql`SELECT ${columns({
        session: atBase,
        converted: atBase,
        perGoal: (g) => flag(sql<SqlBool>`sg.goal_id = ${g.id}`),
      })}
    FROM session_goals b ${sql.raw(d.orderedJoin)} sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id
      ${sql.raw(d.orderedJoin)} session_goals sg ON sg.site_id = s.site_id AND sg.session_id = s.session_id
    WHERE b.site_id = ${query.site.id} AND ${rangeStarts(query, 'b')} AND b.goal_id IN (${sql.join(selection.base)})${firstBase}
      AND ${rangeStarts(query)} AND ${settled('s')}${andAlso(selection.rest('s'))}`;
      const counted = { ...query, filters: selection.counted };
      const shape = { session: true, perGoal: true };
      const rows = storedAndQueuedRows(query, goals, shape, settledRows, sessionSelected(counted, 's', true));
      return sums(goals, rows, true).compile(d.builder);
    };
  },

  /**
   * The converted sessions of conversionCounts under any filters, from the goals stored for
   * the settled sessions (storedConvertedRows). The range's selected sessions come from
   * sessionTotals.
   */
  storedConvertedCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    return (d) => storedCounts(d, query, goals).compile(d.builder);
  },

  /**
   * The converted sessions of conversionCounts under `page!=` one path whose session_pages rows
   * are current (`without`: sessionPagesComplement): the site's from the conversion rollups
   * (rolledUpConversionCounts) less the path's from the goals stored for its rows
   * (storedConvertedCounts under `page==` the path), in one statement. A session either has a
   * pageview of the path or not, so each count is the range's less the path's.
   */
  convertedCountsLessPage(
    without: PageComplement,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    return (d) =>
      rowLess<Record<string, number | string>>(
        ['converted', ...goals.map((_, i) => `goal_${i}`)],
        rolledUpCounts(d, without.site, goals),
        storedCounts(d, without.page, goals),
      ).compile(d.builder);
  },
};

/** The SQL behind GET /sites/{id}/conversions. */
@Injectable()
export class ConversionsQueries {
  constructor(private readonly db: ReportDb) {}

  async conversionCounts(query: StatsQuery, conversionGoals: ConversionGoals): Promise<ConversionCounts> {
    const { goals } = conversionGoals;
    const counts = (sessions: unknown, row: Record<string, number | string>): ConversionCounts => ({
      sessions: Number(sessions),
      convertedSessions: Number(row.converted),
      goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
    });
    const withTotals = async (statement: ReportStatement<Record<string, number | string>>) => {
      const [[totals], [row]] = await Promise.all([
        this.db.run(sharedStatements.sessionTotals(query, ['sessions'])),
        this.db.run(statement),
      ]);
      return counts(totals.sessions, row);
    };
    if (
      conversionRollupsMayAnswer(query, conversionGoals.rolledUp) ||
      goalAttributeRollupsMayAnswer(query, conversionGoals.rolledUp)
    ) {
      return withTotals(conversionsStatements.rolledUpConversionCounts(query, goals));
    }
    // page!= one path: the site's less the path's (sessionPagesComplement).
    const without = sessionPagesComplement(query, { metrics: ['sessions'] });
    if (
      without !== undefined &&
      conversionRollupsMayAnswer(without.site, conversionGoals.rolledUp) &&
      storedConversionsMayAnswer(without.page, conversionGoals.rolledUp)
    ) {
      return withTotals(conversionsStatements.convertedCountsLessPage(without, goals));
    }
    const selection = storedGoalSelection(query.filters);
    if (selection !== null && storedGoalsMayAnswer(query, conversionGoals.rolledUp)) {
      // Under != conditions only, the range's sessions (unfiltered rollups) at the same time.
      const [[row], all] = await Promise.all([
        this.db.run(conversionsStatements.storedGoalConversionCounts(query, goals, selection)),
        selection.complement ? this.conversionCounts({ ...query, filters: [] }, conversionGoals) : null,
      ]);
      const counted = counts(row.sessions, row);
      if (all === null) return counted;
      // The selected sessions are the range's sessions but the counted ones.
      return {
        sessions: all.sessions - counted.sessions,
        convertedSessions: all.convertedSessions - counted.convertedSessions,
        goalConversions: all.goalConversions.map((n, i) => n - counted.goalConversions[i]),
      };
    }
    if (storedConversionsMayAnswer(query, conversionGoals.rolledUp)) {
      return withTotals(conversionsStatements.storedConvertedCounts(query, goals));
    }
    const [row] = await this.db.run(conversionsStatements.conversionCounts(query, goals));
    return counts(row.sessions, row);
  }
}
