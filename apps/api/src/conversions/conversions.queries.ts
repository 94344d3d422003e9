import { convertedSessionsTableSql, GoalDefinition, ReportDb, ReportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';

export interface GoalRow {
  id: number;
  name: string;
  type: 'event' | 'path';
  match_value: string;
}

export interface ConversionCounts {
  sessions: number;
  convertedSessions: number;
  /** Per goal, in the order the goals were given. */
  goalConversions: number[];
}

/** The SQL behind GET /sites/{id}/conversions. */
@Injectable()
export class ConversionsQueries {
  constructor(private readonly db: ReportDb) {}

  goalsOfSite(siteId: number): Promise<GoalRow[]> {
    return this.db.select<GoalRow>(
      'SELECT id, name, type, match_value FROM goals WHERE site_id = ? ORDER BY id',
      [siteId],
    );
  }

  /**
   * Over the sessions that started in the range: how many there are, how many converted any goal,
   * and how many converted each goal, in one pass over their goal-matching hits. A session converts with any of its hits, including hits after
   * the range end: the conversion belongs to the range of the session start (SPEC §1).
   */
  async conversionCounts(
    siteId: number,
    range: ReportRange,
    goals: GoalDefinition[],
  ): Promise<ConversionCounts> {
    const where = {
      sql: 'cs.site_id = ? AND cs.started_at >= ? AND cs.started_at < ?',
      params: [siteId, range.startUtc, range.endUtc],
    };
    const converted = convertedSessionsTableSql(goals, where);
    const columns = [
      'COUNT(*) AS sessions',
      'COUNT(c.session_id) AS converted',
      ...goals.map((_, i) => `COALESCE(SUM(c.goal_${i}), 0) AS goal_${i}`),
    ];
    const rows = await this.db.select<Record<string, number | string>>(
      `SELECT ${columns.join(', ')}
         FROM sessions s
         LEFT JOIN (${converted.sql}) c ON c.session_id = s.session_id
        WHERE s.site_id = ? AND s.started_at >= ? AND s.started_at < ?`,
      [...converted.params, siteId, range.startUtc, range.endUtc],
    );
    const row = rows[0];
    return {
      sessions: Number(row.sessions),
      convertedSessions: Number(row.converted),
      goalConversions: goals.map((_, i) => Number(row[`goal_${i}`])),
    };
  }
}
