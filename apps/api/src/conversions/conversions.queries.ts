import {
  ConversionGoals,
  conversionRollupsMayAnswer,
  conversionTail,
  convertedSessionsTable,
  decideTable,
  GoalDefinition,
  ReportDb,
  ReportStatement,
  rollupParts,
  sessionMetrics,
  sharedStatements,
  StatsQuery,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { sql, SqlBool } from 'kysely';

export interface ConversionCounts {
  sessions: number;
  convertedSessions: number;
  /** Per goal, in the order the goals were given. */
  goalConversions: number[];
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
    const [row] = await this.db.run(conversionsStatements.conversionCounts(query, goals));
    return {
      sessions: Number(row.sessions),
      convertedSessions: Number(row.converted),
      goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
    };
  }
}
