import {
  andAlso,
  ConversionGoals,
  conversionRollupsMayAnswer,
  conversionTail,
  convertedSessionsTable,
  decideTable,
  GoalDefinition,
  ReportDb,
  ReportStatement,
  rollupParts,
  sessionConverted,
  sessionMetrics,
  sessionSelected,
  settled,
  sharedStatements,
  StatsQuery,
  StoredGoalSelection,
  storedGoalSelection,
  storedConversionsMayAnswer,
  storedGoalsMayAnswer,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { RawBuilder, sql, SqlBool } from 'kysely';

export interface ConversionCounts {
  sessions: number;
  convertedSessions: number;
  /** Per goal, in the order the goals were given. */
  goalConversions: number[];
}

/** 1 where `condition` holds, else 0. */
const flag = (condition: RawBuilder<SqlBool>) => sql`CASE WHEN ${condition} THEN 1 ELSE 0 END`;

/** What a row of storedAndQueued counts: the session (optional), "converted", and each goal. */
type CountColumns = (row: {
  session?: RawBuilder<unknown>;
  converted: RawBuilder<unknown>;
  perGoal: (goal: GoalDefinition) => RawBuilder<unknown>;
}) => RawBuilder<unknown>;

/** Sessions `s` that started in the query's range. */
const rangeStarts = (query: StatsQuery) =>
  sql`s.started_at >= ${query.range.startUtc} AND s.started_at < ${query.range.endUtc}`;

/**
 * The sums, `sessions` (with `withSessions`), `converted` and `goal_<i>`, over the settled
 * sessions' rows (`settledRows`, given the columns to select) and over the queued sessions of
 * the range that `queuedSelected` selects. A queued session's row and stored goals may lag its
 * hits, so each one counts as the raw path counts it: converted by its hits stamped from the
 * range start (sessionConverted, as convertedSessionsTable), selected by its hits
 * (sessionSelected).
 */
function storedAndQueued(
  query: StatsQuery,
  goals: GoalDefinition[],
  settledRows: (columns: CountColumns) => RawBuilder<unknown>,
  queuedSelected: RawBuilder<SqlBool> | null,
  withSessions: boolean,
): RawBuilder<Record<string, number | string>> {
  const names = [...(withSessions ? ['session'] : []), 'converted', ...goals.map((_, i) => `goal_${i}`)];
  const columns: CountColumns = (row) =>
    sql.join([
      ...(withSessions ? [sql`${row.session ?? sql`1`} AS session`] : []),
      sql`${row.converted} AS converted`,
      ...goals.map((g, i) => sql`${row.perGoal(g)} AS ${sql.ref(`goal_${i}`)}`),
    ]);
  const sums = sql.join(
    names.map(
      (c) => sql`COALESCE(SUM(${sql.ref(`x.${c}`)}), 0) AS ${sql.ref(c === 'session' ? 'sessions' : c)}`,
    ),
  );
  const since = query.range.startUtc;
  return sql`SELECT ${sums} FROM (
  ${settledRows(columns)}
  UNION ALL
  SELECT ${columns({
    session: sql`1`,
    converted: flag(sessionConverted('s', goals, since)),
    perGoal: (g) => flag(sessionConverted('s', [g], since)),
  })}
    FROM dirty_sessions q JOIN sessions s ON s.site_id = q.site_id AND s.session_id = q.session_id
    WHERE q.site_id = ${query.site.id} AND ${rangeStarts(query)}${andAlso(queuedSelected)}
) x`;
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
      return d.builder
        .selectFrom('sessions as s')
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
        .where(where.sessions(query, 's'))
        .compile();
    };
  },

  /**
   * The same counts of converted sessions from the conversion rollups (when
   * conversionRollupsMayAnswer): sessions that converted any goal (one attribute's rows of
   * converted_rollups, and of converted_day_rollups for whole site days, add up to them all) and
   * each goal (goal_day_rollups for whole site days, goal_rollups at the edges) by bucket of the
   * session start, plus the change the queued sessions bring (conversionTail).
   */
  rolledUpConversionCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    return (d) => {
      const tail = conversionTail(query, goals);
      // Whole site days from the day rows (one a channel and day), the rest from the 15-minute
      // rows: at 10M pageviews the 15-minute rows of a 30-day range were ~23k of the ~28k rows
      // this statement read (BENCHMARKS.md run AR).
      const converted = sql.join(
        rollupParts(query, 'converted_rollups', 'converted_day_rollups').map(
          (part) =>
            sql`(${d.builder
              .selectFrom(`${part.table} as r` as 'converted_rollups as r')
              .select(sql<number>`COALESCE(SUM(r.sessions), 0)`.as('n'))
              .where(where.sessionRollups(part.query, 'channel', 'r'))})`,
        ),
        sql` + `,
      );
      // Each goal's rows likewise: ~2,900 15-minute rows a goal over 30 days at 10M pageviews.
      const goalParts = rollupParts(query, 'goal_rollups', 'goal_day_rollups');
      const perGoal = goals.map((g) =>
        sql.join(
          goalParts.map(
            (part) =>
              sql`(${d.builder
                .selectFrom(`${part.table} as g` as 'goal_rollups as g')
                .select(sql<number>`COALESCE(SUM(g.sessions), 0)`.as('n'))
                .where(where.goalRollups(part.query, g.id, 'g'))})`,
          ),
          sql` + `,
        ),
      );
      return d.builder
        .selectFrom(
          sql`(SELECT COALESCE(SUM(x.converted), 0) AS converted${sql.join(
            goals.map(
              (_, i) => sql`, COALESCE(SUM(${sql.ref(`x.goal_${i}`)}), 0) AS ${sql.ref(`goal_${i}`)}`,
            ),
            sql``,
          )} FROM (${tail}) x)`.as('t'),
        )
        .select([
          sql<number | string>`${converted} + t.converted`.as('converted'),
          ...perGoal.map((rows, i) =>
            sql<number | string>`${rows} + ${sql.ref(`t.goal_${i}`)}`.as(`goal_${i}`),
          ),
        ])
        .compile();
    };
  },

  /**
   * The same counts over the sessions of the range that `selection` counts (storedGoalSelection:
   * every condition on `goal`, the goals rolled up), from the goals stored for them
   * (session_goals). Each settled session of the range that converted a base goal is read from
   * that goal's rows (at its first base goal, when it converted several), tested for the other
   * conditions on its own rows, and joined to all its rows: one row per goal it converted, so
   * a session counts once (at its base goal's row), converted (it converted a base goal) and
   * for each goal it converted. The queued sessions as storedAndQueued reads them. At 10M
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
          : sql` AND NOT EXISTS (SELECT 1 FROM session_goals e WHERE e.site_id = b.site_id AND e.session_id = b.session_id AND e.goal_id IN (${sql.join(selection.base)}) AND e.goal_id < b.goal_id)`;
      const atBase = flag(sql<SqlBool>`sg.goal_id = b.goal_id`);
      const settledRows = (columns: CountColumns) => sql`SELECT ${columns({
        session: atBase,
        converted: atBase,
        perGoal: (g) => flag(sql<SqlBool>`sg.goal_id = ${g.id}`),
      })}
    FROM session_goals b ${sql.raw(d.orderedJoin)} sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id
      ${sql.raw(d.orderedJoin)} session_goals sg ON sg.site_id = s.site_id AND sg.session_id = s.session_id
    WHERE b.site_id = ${query.site.id} AND b.goal_id IN (${sql.join(selection.base)})${firstBase}
      AND ${rangeStarts(query)} AND ${settled('s')}${andAlso(selection.rest('s'))}`;
      const counted = { ...query, filters: selection.counted };
      return storedAndQueued(query, goals, settledRows, sessionSelected(counted, 's', true), true).compile(
        d.builder,
      );
    };
  },

  /**
   * The converted sessions of conversionCounts under any filters, from the goals stored for
   * the settled sessions (session_goals; the goals rolled up): each stored goal's row of the
   * site, its session read by key for its start and tested for the filters, counts for its
   * goal, and for "converted" at the session's first stored goal. The queued sessions as
   * storedAndQueued reads them. Converted sessions are a few of the range's: at 10M pageviews
   * under country==US the raw statement, which joins every selected session of the range to its
   * goal hits, ran past the 10-s budget on every request (BENCHMARKS.md run AW). The range's
   * selected sessions come from sessionTotals.
   */
  storedConvertedCounts(
    query: StatsQuery,
    goals: GoalDefinition[],
  ): ReportStatement<Record<string, number | string>> {
    return (d) => {
      const firstStored = flag(
        sql<SqlBool>`NOT EXISTS (SELECT 1 FROM session_goals e WHERE e.site_id = b.site_id AND e.session_id = b.session_id AND e.goal_id < b.goal_id)`,
      );
      const settledRows = (columns: CountColumns) => sql`SELECT ${columns({
        converted: firstStored,
        perGoal: (g) => flag(sql<SqlBool>`b.goal_id = ${g.id}`),
      })}
    FROM session_goals b ${sql.raw(d.orderedJoin)} sessions s ON s.site_id = b.site_id AND s.session_id = b.session_id
    WHERE b.site_id = ${query.site.id} AND ${rangeStarts(query)}
      AND ${settled('s')}${andAlso(sessionSelected(query, 's'))}`;
      return storedAndQueued(query, goals, settledRows, sessionSelected(query, 's', true), false).compile(
        d.builder,
      );
    };
  },
};

/** The SQL behind GET /sites/{id}/conversions. */
@Injectable()
export class ConversionsQueries {
  constructor(private readonly db: ReportDb) {}

  async conversionCounts(query: StatsQuery, conversionGoals: ConversionGoals): Promise<ConversionCounts> {
    const { goals } = conversionGoals;
    if (conversionRollupsMayAnswer(query, conversionGoals.rolledUp)) {
      const [totals] = await this.db.run(sharedStatements.sessionTotals(query, ['sessions']));
      const [row] = await this.db.run(conversionsStatements.rolledUpConversionCounts(query, goals));
      return {
        sessions: Number(totals.sessions),
        convertedSessions: Number(row.converted),
        goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
      };
    }
    const selection = storedGoalSelection(query.filters);
    if (selection !== null && storedGoalsMayAnswer(query, conversionGoals.rolledUp)) {
      // Under != conditions only, the range's sessions (unfiltered rollups) at the same time.
      const [[row], all] = await Promise.all([
        this.db.run(conversionsStatements.storedGoalConversionCounts(query, goals, selection)),
        selection.complement ? this.conversionCounts({ ...query, filters: [] }, conversionGoals) : null,
      ]);
      const counted = {
        sessions: Number(row.sessions),
        convertedSessions: Number(row.converted),
        goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
      };
      if (all === null) return counted;
      // The selected sessions are the range's sessions but the counted ones.
      return {
        sessions: all.sessions - counted.sessions,
        convertedSessions: all.convertedSessions - counted.convertedSessions,
        goalConversions: all.goalConversions.map((n, i) => n - counted.goalConversions[i]),
      };
    }
    if (storedConversionsMayAnswer(query, conversionGoals.rolledUp)) {
      const [[totals], [row]] = await Promise.all([
        this.db.run(sharedStatements.sessionTotals(query, ['sessions'])),
        this.db.run(conversionsStatements.storedConvertedCounts(query, goals)),
      ]);
      return {
        sessions: Number(totals.sessions),
        convertedSessions: Number(row.converted),
        goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
      };
    }
    const [row] = await this.db.run(conversionsStatements.conversionCounts(query, goals));
    return {
      sessions: Number(row.sessions),
      convertedSessions: Number(row.converted),
      goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
    };
  }
}
