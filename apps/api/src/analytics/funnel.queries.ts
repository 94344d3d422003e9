import type { SqlDialect } from '@app/db';
import {
  decideTable,
  hitMatch,
  hitOrderSql,
  HITS_BY_STEP,
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

/**
 * `FROM … WHERE` of the hits that start attempts (SPEC §4), aliased `h`: the step-1 hits stamped
 * in the range, of selected sessions under filters, read through the step index.
 */
function attemptStarts(d: SqlDialect, query: StatsQuery, first: FunnelStep): RawBuilder<unknown> {
  return sql`${sql.raw(d.tableWithIndex('hits', 'h', HITS_BY_STEP))}
WHERE ${where.hits(query, 'h')} AND ${stepMatch('h', first)}`;
}

/**
 * The index a later step's lookup reads: the hits of the step's event name or path, by visitor
 * and time (HITS_BY_STEP); for a path prefix, whose hits span a range of step keys, the
 * visitor's hits in time order instead (HITS_BY_VISITOR).
 */
function stepIndex(step: FunnelStep): string {
  return step.type === 'pageview' && step.path.endsWith('*') ? HITS_BY_VISITOR : HITS_BY_STEP;
}

export const funnelStatements = {
  visitorsPerStepBackwards,
  visitorsAtStepBackwards,
  /**
   * Visitors per reached step, SPEC §4 in one statement. Every step-1 hit in the range starts
   * an attempt (the innermost derived table: visitor_id, t1, s1). Level k+1 adds to each attempt
   * the seq of the first hit after its step-k hit, in hit order (ts, seq), of the same visitor
   * that matches step k+1 and is stamped no later than t1 + window (NULL when there is none, or
   * when the attempt stopped earlier). The earliest such hit is always the best choice: every
   * later step faces the same deadline, so starting from an earlier hit never loses a match.
   * Under filters every step, the first included, only counts hits of selected sessions (SPEC §3).
   *
   * Each level is materialised (d.materialized): merged, the outer levels and the final count
   * computed the lookups again (4.7-5.5 s against 3.6-4.0 s on a 1M database).
   * Nested derived tables, not a recursive CTE: MariaDB 10.11 loses a row of a recursive CTE
   * when its work table outgrows the in-memory temporary table (MDEV-40803): with 1 MB ones the
   * benchmark's 1M database counted 50,033 visitors at step 2 for 50,034.
   * test/funnel-spill.e2e-spec.ts runs this statement with temporary tables that convert.
   */
  visitorsPerStep(
    query: StatsQuery,
    steps: FunnelStep[],
    windowHours: number,
  ): ReportStatement<Record<string, number | string>> {
    decideTable(query, 'hits');
    return (d) => {
      const deadline = (level: string) =>
        d.addSeconds(sql.ref(`${level}.t1`), sql`${windowHours * HOUR_SECONDS}`);
      const attempts = sql`SELECT h.visitor_id, h.ts AS t1, h.seq AS s1 FROM ${attemptStarts(d, query, steps[0])}`;
      // Level k (2…n) wraps level k-1 (alias dp) and adds s<k>, the seq of its step-k hit.
      const levels = steps.slice(1).reduce((inner, step, i) => {
        const k = i + 2;
        const previous = sql.ref(`dp.s${k - 1}`);
        // The step-(k-1) hit: the attempt's own step-1 hit at level 2, else looked up by seq.
        const after =
          k === 2
            ? { from: sql``, ts: sql.ref('dp.t1'), seq: previous, where: sql`1 = 1` }
            : {
                from: sql`hits p JOIN `,
                ts: sql.ref('p.ts'),
                seq: sql.ref('p.seq'),
                where: sql`p.seq = ${previous}`,
              };
        const join = k === 2 ? sql`` : sql` ON 1 = 1`;
        const lookup = sql`(SELECT x.seq FROM ${after.from}${sql.raw(d.tableWithIndex('hits', 'x', stepIndex(step)))}${join}
    WHERE ${after.where} AND ${where.hitsOfSelectedSessions(query, 'x')} AND x.visitor_id = dp.visitor_id
      AND x.ts >= ${after.ts} AND (x.ts > ${after.ts} OR x.seq > ${after.seq}) AND x.ts <= ${deadline('dp')}
      AND ${stepMatch('x', step)}
    ORDER BY ${sql.raw(hitOrderSql('x'))} LIMIT 1)`;
        return d.materialized(sql`SELECT dp.*, ${lookup} AS ${sql.ref(`s${k}`)} FROM (${inner}) dp`);
      }, attempts);
      const perStep = steps.map((_, i) =>
        i === 0
          ? sql`COUNT(DISTINCT f.visitor_id) AS ${sql.ref('step_1')}`
          : sql`COUNT(DISTINCT CASE WHEN ${sql.ref(`f.s${i + 1}`)} IS NOT NULL THEN f.visitor_id END) AS ${sql.ref(`step_${i + 1}`)}`,
      );
      return sql<Record<string, number | string>>`SELECT ${sql.join(perStep)} FROM (${levels}) f`.compile(
        d.builder,
      );
    };
  },
};

/**
 * SPEC §4's funnel read backwards from each step's hits, every step in one statement; requests
 * run each step's part as a statement of its own (`visitorsAtStepBackwards`), and
 * `visitorsPerStep` stays the raw path's, the parity reference.
 *
 * An attempt reaches step k exactly when the visitor has hits h1 < h2 < … < hk in hit order,
 * each matching its step, with h1 stamped in the range and hk no later than h1 + window (the
 * first matching hit after each step is what `visitorsPerStep` follows, and it finds such a
 * chain whenever one exists). For one step-k hit x, take the latest step-(k-1) hit before it,
 * then the latest step-(k-2) hit before that one, and so on: every hit of a chain ending at x
 * comes no later than the hit picked for its step (by induction from x down), so a chain ends
 * at x exactly when the picks reach down to step 2 and some step-1 hit in the range comes
 * before the step-2 pick, no earlier than x − window (no hit of a chain can be older).
 *
 * Steps k−1 … 2 are picked by an index lookup each (a scalar subquery, LIMIT 1, read backwards)
 * whose hit is joined by its seq for its ts; step 1 is a semi-join (EXISTS), which stops at the
 * first hit that qualifies. So a step costs k − 1 index lookups per hit of step k, where
 * `visitorsPerStep` costs k − 1 per step-1 hit: funnels narrow (at 10M pageviews the benchmark's
 * funnel has 2.6M step-1 hits for 716k and 87k at steps 2 and 3). Not EXISTS at every level:
 * that was faster on the benchmark's data (0.64 against 1.05 s for step 3), but it tries every
 * step-(k-1) hit in the window, oldest first, and every one below it, where one pick suffices,
 * so a visitor with many repeats of the steps costs their product. Step 1's visitors are the
 * distinct visitors of its hits in the range. Under filters every hit counts only if its session
 * is selected (SPEC §3).
 */
function visitorsPerStepBackwards(
  query: StatsQuery,
  steps: FunnelStep[],
  windowHours: number,
): ReportStatement<Record<string, number | string>> {
  decideTable(query, 'hits');
  return (d) => {
    const columns = steps.map(
      (_, i) => sql`(${visitorsAtStep(d, query, steps, windowHours, i + 1)}) AS ${sql.ref(`step_${i + 1}`)}`,
    );
    return sql<Record<string, number | string>>`SELECT ${sql.join(columns)}`.compile(d.builder);
  };
}

/**
 * Step `k`'s visitors of `visitorsPerStepBackwards` as a statement of its own (column `step_<k>`),
 * so that a request runs its steps at once, on as many connections as it holds permits for: at
 * 1M pageviews the benchmark's steps 1 and 2 take 0.4-0.5 and 0.6 s each, one after another in
 * the one statement.
 */
function visitorsAtStepBackwards(
  query: StatsQuery,
  steps: FunnelStep[],
  windowHours: number,
  k: number,
): ReportStatement<Record<string, number | string>> {
  decideTable(query, 'hits');
  return (d) =>
    sql<
      Record<string, number | string>
    >`SELECT (${visitorsAtStep(d, query, steps, windowHours, k)}) AS ${sql.ref(`step_${k}`)}`.compile(
      d.builder,
    );
}

/** The COUNT of step `k`'s visitors of `visitorsPerStepBackwards` (the definition is there). */
function visitorsAtStep(
  d: SqlDialect,
  query: StatsQuery,
  steps: FunnelStep[],
  windowHours: number,
  k: number,
): RawBuilder<unknown> {
  if (k === 1) return sql`SELECT COUNT(DISTINCT h.visitor_id) FROM ${attemptStarts(d, query, steps[0])}`;
  const window = windowHours * HOUR_SECONDS;
  const step = steps[k - 1];
  const oldest = d.addSeconds(sql.ref('x.ts'), sql`${-window}`);
  // A step-j hit (alias y) of x's visitor before hit `next` in hit order, no older than x − window.
  const before = (j: number, next: { ts: RawBuilder<unknown>; seq: RawBuilder<unknown> }) =>
    sql`${where.hitsOfSelectedSessions(query, 'y')} AND y.visitor_id = x.visitor_id
      AND y.ts <= ${next.ts} AND (y.ts < ${next.ts} OR y.seq < ${next.seq}) AND y.ts >= ${oldest}
      AND ${stepMatch('y', steps[j - 1])}`;
  const hit = (alias: string) => ({ ts: sql.ref(`${alias}.ts`), seq: sql.ref(`${alias}.seq`) });
  // p<j>: the latest step-j hit before p<j+1> (p<k> is x itself), j = k-1 … 2.
  const picks: RawBuilder<unknown>[] = [];
  let next = hit('x');
  for (let j = k - 1; j >= 2; j--) {
    const latest = sql`(SELECT y.seq FROM ${sql.raw(d.tableWithIndex('hits', 'y', stepIndex(steps[j - 1])))}
    WHERE ${before(j, next)}
    ORDER BY ${sql.raw(hitOrderSql('y', 'desc'))} LIMIT 1)`;
    picks.push(sql`
  JOIN hits ${sql.ref(`p${j}`)} ON ${sql.ref(`p${j}.seq`)} = ${latest}`);
    next = hit(`p${j}`);
  }
  const start = sql`EXISTS (SELECT 1 FROM ${sql.raw(d.tableWithIndex('hits', 'y', stepIndex(steps[0])))}
    WHERE ${before(1, next)} AND y.ts >= ${query.range.startUtc} AND y.ts < ${query.range.endUtc})`;
  // Step k's hits that can end a chain: stamped from the range start to before its end + window.
  return sql`SELECT COUNT(DISTINCT x.visitor_id) FROM ${sql.raw(d.tableWithIndex('hits', 'x', stepIndex(step)))}${sql.join(picks, sql``)}
WHERE ${where.hitsOfSelectedSessions(query, 'x')} AND x.ts >= ${query.range.startUtc} AND x.ts < ${d.addSeconds(sql`${query.range.endUtc}`, sql`${window}`)}
  AND ${stepMatch('x', step)} AND ${start}`;
}

@Injectable()
export class FunnelQueries {
  constructor(private readonly db: ReportDb) {}

  /** Visitors per reached step (index 0 = step 1): each step a statement, run at once. */
  async visitorsPerStep(query: StatsQuery, steps: FunnelStep[], windowHours: number): Promise<number[]> {
    if (query.tables === 'raw') {
      const [row] = await this.db.run(funnelStatements.visitorsPerStep(query, steps, windowHours));
      return steps.map((_, i) => Number(row[`step_${i + 1}`]));
    }
    return Promise.all(
      steps.map(async (_, i) => {
        const statement = funnelStatements.visitorsAtStepBackwards(query, steps, windowHours, i + 1);
        const [row] = await this.db.run(statement);
        return Number(row[`step_${i + 1}`]);
      }),
    );
  }
}
