import {
  convertedSessionsTable,
  decideTable,
  GoalDefinition,
  ReportDb,
  ReportStatement,
  sessionMetrics,
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
};

/** The SQL behind GET /sites/{id}/conversions. */
@Injectable()
export class ConversionsQueries {
  constructor(private readonly db: ReportDb) {}

  async conversionCounts(query: StatsQuery, goals: GoalDefinition[]): Promise<ConversionCounts> {
    const [row] = await this.db.run(conversionsStatements.conversionCounts(query, goals));
    return {
      sessions: Number(row.sessions),
      convertedSessions: Number(row.converted),
      goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
    };
  }
}
