import { HIT_ORDER, hitMatchSql, ReportDb, ReportRange, SqlFragment } from '@app/stats';
import { Injectable } from '@nestjs/common';
import type { FunnelStep } from './funnel-steps';

const HOUR_SECONDS = 3600;
const NEXT_HIT_ORDER = HIT_ORDER.split(',')
  .map((column) => `x.${column.trim()}`)
  .join(', ');

function stepMatchSql(alias: string, step: FunnelStep): SqlFragment {
  return step.type === 'event'
    ? hitMatchSql(alias, { type: 'event', name: step.name })
    : hitMatchSql(alias, { type: 'pageview', path: step.path });
}

@Injectable()
export class FunnelQueries {
  constructor(private readonly db: ReportDb) {}

  /**
   * Visitors per reached step (index 0 = step 1), SPEC §4 in one statement. The recursive CTE
   * walks every attempt one step per iteration: an attempt starts at each step-1 hit in the
   * range; from the hit that matched step k it moves to the first later hit of the same visitor
   * (hit order ts, seq; index (site_id, visitor_id, ts) + seq) that matches step k+1 and is
   * stamped no later than t1 + window. The earliest such hit is always the best choice: every
   * later step faces the same deadline, so starting from an earlier hit never loses a match.
   */
  async visitorsPerStep(
    siteId: number,
    range: ReportRange,
    steps: FunnelStep[],
    windowHours: number,
  ): Promise<number[]> {
    const first = stepMatchSql('h', steps[0]);
    const later = steps.slice(1).map((step) => stepMatchSql('x', step));
    const nextMatch =
      later.length === 0
        ? '(1 = 0)'
        : `CASE w.step ${later.map((m, i) => `WHEN ${i + 1} THEN ${m.sql}`).join(' ')} END`;
    const deadline = this.db.dialect.addSeconds('w.t1', '?');
    const rows = await this.db.select<{ step: number | string; visitors: number | string }>(
      // Wrapped so that the statement starts with SELECT, where MySQL takes its time-budget hint.
      `SELECT f.step, f.visitors FROM (WITH RECURSIVE walk (visitor_id, t1, ts, seq, step) AS (
         SELECT h.visitor_id, h.ts, h.ts, h.seq, 1 FROM hits h
         WHERE h.site_id = ? AND h.ts >= ? AND h.ts < ? AND ${first.sql}
         UNION ALL
         SELECT w.visitor_id, w.t1, n.ts, n.seq, w.step + 1
         FROM walk w JOIN hits n ON n.seq = (
           SELECT x.seq FROM hits x
           WHERE x.site_id = ? AND x.visitor_id = w.visitor_id
             AND x.ts >= w.ts AND (x.ts > w.ts OR x.seq > w.seq) AND x.ts <= ${deadline}
             AND ${nextMatch}
           ORDER BY ${NEXT_HIT_ORDER} LIMIT 1)
         WHERE w.step < ?
       )
       SELECT step, COUNT(DISTINCT visitor_id) AS visitors FROM walk GROUP BY step) f`,
      [
        siteId,
        range.startUtc,
        range.endUtc,
        ...first.params,
        siteId,
        windowHours * HOUR_SECONDS,
        ...later.flatMap((m) => m.params),
        steps.length,
      ],
    );
    const byStep = new Map(rows.map((r) => [Number(r.step), Number(r.visitors)]));
    return steps.map((_, i) => byStep.get(i + 1) ?? 0);
  }
}
