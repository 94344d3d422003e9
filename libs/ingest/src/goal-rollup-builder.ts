import { Sql } from '@app/db';
import { goalMatch, GoalDefinition, goalsOfSessions } from '@app/stats/conversions';
import { HITS_BY_STEP, SESSION_ATTRIBUTES } from '@app/stats/definitions';
import {
  conversionRollupDeltas,
  ConvertedRollupDelta,
  fillGoalAttributeRollups,
  GoalAttributeRollupDelta,
  GoalRollupDelta,
  GoalSession,
} from '@app/stats/rollups/goal-rollup';
import {
  CONVERTED_DAY_ROLLUP,
  GOAL_ATTRIBUTE_DAY_ROLLUP,
  GOAL_DAY_ROLLUP,
  refillDayRollups,
} from '@app/stats/rollups/day-refill';
import { attributeRow, byDay } from '@app/stats/rollups/session-bucket-rollup';
import { md5, ROLLUP_DIMENSIONS, type RolledUpSession } from '@app/stats/rollups/session-rollup';
import { sql } from 'kysely';
import { DataSource, EntityManager } from 'typeorm';
import { withDeadlockRetry } from './retry';
import {
  inList,
  ROLLUP_WRITE_ROWS,
  SESSIONS_COUNT,
  writeRollupDeltas,
  replaceSessionRows,
  rowsBySite,
  siteSessionsIn,
  SitePart,
  SiteSessions,
} from './rollup-writer';

interface GoalRow {
  id: number | string;
  type: 'event' | 'path';
  match_value: string;
}

const toGoal = (g: GoalRow): GoalDefinition => ({
  id: Number(g.id),
  type: g.type,
  matchValue: g.match_value,
});

/**
 * Keeps the conversion rollups (migration 1765500000000) equal to what the sessions and hits
 * say for the goals in `rolled_up_goals`:
 *
 * - `reconcile`, at the start of every `aggregate`: a site whose goals differ from the ones its
 *   rollups hold (a goal created, or deleted) gets `session_goals` of the new goals from their
 *   matching hits (through the step index), loses those of deleted goals, and has its
 *   `goal_rollups`, `converted_rollups` and `goal_attribute_rollups` rebuilt from them (and
 *   their day rows from those, by the site's day). Until then its reports count
 *   conversions from the raw tables.
 * - `apply`, in each chunk's transaction: the re-derived sessions' old goals and attributes
 *   subtracted, their goals recomputed from all their hits and added, each stored with the
 *   session's start as derived now.
 */
export class GoalRollupBuilder {
  constructor(
    private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {}

  /** Rebuilds the conversion rollups of every site whose goals changed; returns how many. */
  async reconcile(): Promise<number> {
    const stale: Array<{ site_id: number | string }> = await this.ds.query(
      `SELECT site_id FROM (
         SELECT site_id, id AS goal_id FROM goals
         UNION ALL
         SELECT site_id, goal_id FROM rolled_up_goals
       ) g GROUP BY site_id, goal_id HAVING COUNT(*) = 1`,
    );
    const sites = [...new Set(stale.map((r) => Number(r.site_id)))].sort((a, b) => a - b);
    for (const siteId of sites) {
      await withDeadlockRetry(() =>
        this.ds.transaction(this.sql.dialect.writeIsolation, (em) => this.rebuildSite(em, siteId)),
      );
    }
    return sites.length;
  }

  private async rebuildSite(em: EntityManager, siteId: number): Promise<void> {
    const d = this.sql.dialect;
    const goals = (
      await em.query<GoalRow[]>('SELECT id, type, match_value FROM goals WHERE site_id = ? ORDER BY id', [
        siteId,
      ])
    ).map(toGoal);
    const built = new Set(
      (
        await em.query<Array<{ goal_id: number | string }>>(
          'SELECT goal_id FROM rolled_up_goals WHERE site_id = ?',
          [siteId],
        )
      ).map((r) => Number(r.goal_id)),
    );
    const current = new Set(goals.map((g) => g.id));
    const removed = [...built].filter((id) => !current.has(id));
    if (removed.length > 0) {
      await em.query(
        `DELETE FROM session_goals WHERE site_id = ? AND goal_id IN (${inList(removed.length)})`,
        [siteId, ...removed],
      );
    }
    for (const goal of goals.filter((g) => !built.has(g.id))) {
      // Rows a lost rolled_up_goals row left behind go first.
      await em.query('DELETE FROM session_goals WHERE site_id = ? AND goal_id = ?', [siteId, goal.id]);
      // Sessions with a matching hit, read from the matching hits alone; derived sessions only.
      const matched = sql`SELECT DISTINCT gh.session_id FROM ${sql.raw(d.tableWithIndex('hits', 'gh', HITS_BY_STEP))}
        WHERE gh.site_id = ${siteId} AND ${goalMatch('gh', goal)}`;
      const insert = sql`INSERT INTO session_goals (site_id, session_id, goal_id, started_at)
        SELECT s.site_id, s.session_id, ${goal.id}, s.started_at FROM (${matched}) m
        JOIN sessions s ON s.site_id = ${siteId} AND s.session_id = m.session_id`.compile(d.builder);
      await em.query(insert.sql, [...insert.parameters]);
    }
    const bucket = d.floorToQuarterHour('s.started_at');
    await em.query('DELETE FROM goal_rollups WHERE site_id = ?', [siteId]);
    await em.query(
      `INSERT INTO goal_rollups (site_id, goal_id, bucket, sessions)
       SELECT sg.site_id, sg.goal_id, ${bucket}, COUNT(*)
       FROM session_goals sg JOIN sessions s ON s.site_id = sg.site_id AND s.session_id = sg.session_id
       WHERE sg.site_id = ? GROUP BY sg.site_id, sg.goal_id, ${bucket}`,
      [siteId],
    );
    await em.query('DELETE FROM converted_rollups WHERE site_id = ?', [siteId]);
    for (const dimension of SESSION_ATTRIBUTES) {
      await em.query(
        `INSERT INTO converted_rollups (site_id, dimension, bucket, value, sessions)
         SELECT s.site_id, '${dimension}', ${bucket}, s.${dimension}, COUNT(*)
         FROM (SELECT DISTINCT session_id FROM session_goals WHERE site_id = ?) c
         JOIN sessions s ON s.site_id = ? AND s.session_id = c.session_id
         GROUP BY s.site_id, ${bucket}, s.${dimension}`,
        [siteId, siteId],
      );
    }
    await em.query('DELETE FROM goal_attribute_rollups WHERE site_id = ?', [siteId]);
    await fillGoalAttributeRollups(em, d, siteId);
    await refillDayRollups(em, {
      dialect: d,
      rollups: [GOAL_DAY_ROLLUP, CONVERTED_DAY_ROLLUP, GOAL_ATTRIBUTE_DAY_ROLLUP],
      sites: { id: siteId },
    });
    await em.query('DELETE FROM rolled_up_goals WHERE site_id = ?', [siteId]);
    const ids = [...current];
    for (let i = 0; i < ids.length; i += ROLLUP_WRITE_ROWS) {
      const part = ids.slice(i, i + ROLLUP_WRITE_ROWS);
      await em.query(
        d.insertIgnore('rolled_up_goals', ['site_id', 'goal_id'], part.length),
        part.flatMap((id) => [siteId, id]),
      );
    }
  }

  /**
   * In a chunk's transaction, after the sessions of `parts` (several sites) were derived again:
   * moves their contributions to the conversion rollups from `before` (the old rows) to `after`.
   */
  async apply(
    em: EntityManager,
    parts: ReadonlyArray<Omit<SitePart<RolledUpSession & { session_id: string }>, 'sessionIds'>>,
  ): Promise<void> {
    const d = this.sql.dialect;
    const sites: SiteSessions = new Map(
      parts
        .map((p) => [p.siteId, [...new Set([...p.before, ...p.after].map((s) => s.session_id))]] as const)
        .filter(([, ids]) => ids.length > 0),
    );
    if (sites.size === 0) return;
    const goalsBySite = rowsBySite(
      await em.query<Array<GoalRow & { site_id: number | string }>>(
        `SELECT r.site_id, g.id, g.type, g.match_value FROM rolled_up_goals r JOIN goals g ON g.id = r.goal_id
         WHERE r.site_id IN (${inList(sites.size)}) ORDER BY r.site_id, g.id`,
        [...sites.keys()],
      ),
    );
    const where = siteSessionsIn(d, sites);
    const oldRows = rowsBySite(
      await em.query<Array<{ site_id: number | string; session_id: string; goal_id: number | string }>>(
        `SELECT site_id, session_id, goal_id FROM session_goals WHERE ${where.sql}`,
        where.parameters,
      ),
    );
    const hadRows = new Map<number, readonly string[]>();
    const rows: unknown[][] = [];
    for (const { siteId, before, after, dayOf } of parts) {
      const sessionIds = sites.get(siteId);
      if (!sessionIds) continue;
      const goals = (goalsBySite.get(siteId) ?? []).map(toGoal);
      const stored = new Map<string, number[]>();
      for (const r of oldRows.get(siteId) ?? [])
        stored.set(r.session_id, [...(stored.get(r.session_id) ?? []), Number(r.goal_id)]);
      if (oldRows.has(siteId)) hadRows.set(siteId, sessionIds);
      const converted = new Map<string, number[]>();
      if (goals.length > 0) {
        // One statement per site with goals: each site's goals are its own tests.
        const compiled = d.renderIndexHints(goalsOfSessions(goals, siteId, sessionIds).compile(d.builder));
        const found: Array<Record<string, number | string>> = await em.query(compiled.sql, [
          ...compiled.parameters,
        ]);
        for (const r of found) {
          converted.set(
            String(r.session_id),
            goals.filter((_, i) => Number(r[`goal_${i}`]) === 1).map((g) => g.id),
          );
        }
      }
      const withGoals = (list: typeof before, goalsOf: Map<string, number[]>): GoalSession[] =>
        list.map((s) => ({
          ...s,
          started_at: new Date(s.started_at),
          goals: goalsOf.get(s.session_id) ?? [],
        }));
      const deltas = conversionRollupDeltas(withGoals(before, stored), withGoals(after, converted));
      const sessionsByDay = <T extends { bucket: Date; sessions: number }>(
        rows: readonly T[],
        identity: (row: T) => string,
      ): T[] =>
        byDay(
          rows.map((r) => ({ ...r, sums: [BigInt(r.sessions)] })),
          dayOf,
          identity,
        ).map((r) => ({ ...r, sessions: Number(r.sums[0]) }));
      for (const [table, deltaRows] of [
        ['goal_rollups', deltas.goals],
        ['goal_day_rollups', sessionsByDay(deltas.goals, (r) => String(r.goalId))],
      ] as const) {
        await writeRollupDeltas<GoalRollupDelta>(em, d, siteId, deltaRows, {
          table,
          keys: ['goal_id', 'bucket'],
          sums: ['sessions'],
          identity: ['goal_id', 'bucket'],
          keyValues: (r) => [r.goalId, r.bucket],
          sumValues: (r) => [r.sessions],
          count: SESSIONS_COUNT,
        });
      }
      for (const [table, deltaRows] of [
        ['converted_rollups', deltas.converted],
        ['converted_day_rollups', sessionsByDay(deltas.converted, attributeRow)],
      ] as const) {
        await writeRollupDeltas<ConvertedRollupDelta>(em, d, siteId, deltaRows, {
          table,
          keys: ['dimension', 'bucket', 'value'],
          sums: ['sessions'],
          identity: ['dimension', 'bucket', 'value'],
          keyValues: (r) => [r.dimension, r.bucket, r.value],
          sumValues: (r) => [r.sessions],
          count: SESSIONS_COUNT,
        });
      }
      for (const [table, deltaRows] of [
        ['goal_attribute_rollups', deltas.attributes],
        ['goal_attribute_day_rollups', sessionsByDay(deltas.attributes, (r) => `${r.goalId}\u0000${r.key}`)],
      ] as const) {
        await writeRollupDeltas<GoalAttributeRollupDelta>(em, d, siteId, deltaRows, {
          table,
          keys: ['goal_id', 'bucket', 'attributes_hash', ...ROLLUP_DIMENSIONS],
          sums: ['sessions'],
          identity: ['goal_id', 'bucket', 'attributes_hash'],
          keyValues: (r) => [r.goalId, r.bucket, md5(r.key), ...ROLLUP_DIMENSIONS.map((a) => r[a])],
          sumValues: (r) => [r.sessions],
          count: SESSIONS_COUNT,
        });
      }
      for (const s of after)
        for (const g of converted.get(s.session_id) ?? [])
          rows.push([siteId, s.session_id, g, new Date(s.started_at)]);
    }
    await replaceSessionRows(em, d, hadRows, 'session_goals', ['session_id', 'goal_id', 'started_at'], rows);
  }
}
