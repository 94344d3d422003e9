import {
  decideTable,
  hitMatch,
  hitOrderSql,
  HITS_BY_VISITOR,
  ReportDb,
  ReportStatement,
  StatsQuery,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { RawBuilder, sql, SqlBool } from 'kysely';
import type { FunnelStep } from './funnel-steps';

const HOUR_SECONDS = 3600;

function stepMatch(alias: string, step: FunnelStep): RawBuilder<SqlBool> {
  return step.type === 'event'
    ? hitMatch(alias, { type: 'event', name: step.name })
    : hitMatch(alias, { type: 'pageview', path: step.path });
}

export const funnelStatements = {
  /**
   * Visitors per reached step, SPEC §4 in one statement. The recursive CTE walks every attempt
   * one step per iteration: an attempt starts at each step-1 hit in the range; from the hit that
   * matched step k it moves to the first later hit of the same visitor (hit order ts, seq; index
   * (site_id, visitor_id, ts) + seq) that matches step k+1 and is stamped no later than
   * t1 + window. The earliest such hit is always the best choice: every later step faces the
   * same deadline, so starting from an earlier hit never loses a match. Under filters every
   * step, the first included, only counts hits of selected sessions (SPEC §3).
   */
  visitorsPerStep(
    query: StatsQuery,
    steps: FunnelStep[],
    windowHours: number,
  ): ReportStatement<{ step: number | string; visitors: number | string }> {
    decideTable(query, 'hits');
    return (d) => {
      const later = steps.slice(1).map((step) => stepMatch('x', step));
      const nextMatch =
        later.length === 0
          ? sql`(1 = 0)`
          : sql`CASE w.step ${sql.join(
              later.map((m, i) => sql`WHEN ${sql.lit(i + 1)} THEN ${m}`),
              sql` `,
            )} END`;
      const deadline = d.addSeconds(sql.ref('w.t1'), sql`${windowHours * HOUR_SECONDS}`);
      // Wrapped so that the statement starts with SELECT, where MySQL takes its time-budget hint.
      return sql<{
        step: number | string;
        visitors: number | string;
      }>`SELECT f.step, f.visitors FROM (WITH RECURSIVE walk (visitor_id, t1, ts, seq, step) AS (
  SELECT h.visitor_id, h.ts, h.ts, h.seq, 1 FROM hits h
  WHERE ${where.hits(query, 'h')} AND ${stepMatch('h', steps[0])}
  UNION ALL
  SELECT w.visitor_id, w.t1, n.ts, n.seq, w.step + 1
  FROM walk w JOIN hits n ON n.seq = (
    SELECT x.seq FROM ${sql.raw(d.tableWithIndex('hits', 'x', HITS_BY_VISITOR))}
    WHERE ${where.hitsOfSelectedSessions(query, 'x')} AND x.visitor_id = w.visitor_id
      AND x.ts >= w.ts AND (x.ts > w.ts OR x.seq > w.seq) AND x.ts <= ${deadline}
      AND ${nextMatch}
    ORDER BY ${sql.raw(hitOrderSql('x'))} LIMIT 1)
  WHERE w.step < ${steps.length}
)
SELECT step, COUNT(DISTINCT visitor_id) AS visitors FROM walk GROUP BY step) f`.compile(d.builder);
    };
  },
};

@Injectable()
export class FunnelQueries {
  constructor(private readonly db: ReportDb) {}

  /** Visitors per reached step (index 0 = step 1). */
  async visitorsPerStep(query: StatsQuery, steps: FunnelStep[], windowHours: number): Promise<number[]> {
    const rows = await this.db.run(funnelStatements.visitorsPerStep(query, steps, windowHours));
    const byStep = new Map(rows.map((r) => [Number(r.step), Number(r.visitors)]));
    return steps.map((_, i) => byStep.get(i + 1) ?? 0);
  }
}
