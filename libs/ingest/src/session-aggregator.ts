import { Sql } from '@app/db';
import { HIT_ORDER, isBounceSql, MISSING_ATTRIBUTE, SESSION_ATTRIBUTES } from '@app/stats/definitions';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { withDeadlockRetry } from './retry';

export const AGGREGATE_CHUNK = 2000;

export interface AggregateSummary {
  sessions: number;
  visitors: number;
  chunks: number;
  seconds: number;
  /** Sessions still queued when the run stopped (0 unless interrupted). */
  remaining: number;
}

const SESSION_COLUMNS = [
  'site_id',
  'session_id',
  'visitor_id',
  'started_at',
  'ended_at',
  'hits',
  'pageviews',
  'events',
  'purchases',
  'is_bounce',
  'duration_seconds',
  'entry_path',
  'exit_path',
  ...SESSION_ATTRIBUTES,
];

const inList = (n: number) => Array(n).fill('?').join(',');

/**
 * Derives sessions (SPEC §1: attributes from the first hit, entry/exit page, bounce,
 * duration) and visitors' first sessions from the hits of queued sessions. Each chunk
 * recomputes its sessions from all their hits, so running it twice, or after late and
 * out-of-order hits, gives the same rows as running it once over everything.
 */
@Injectable()
export class SessionAggregator {
  private stopRequested = false;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {}

  requestStop(): void {
    this.stopRequested = true;
  }

  async pending(): Promise<number> {
    const rows: Array<{ n: number | string }> = await this.ds.query(
      'SELECT COUNT(*) AS n FROM dirty_sessions',
    );
    return Number(rows[0].n);
  }

  async run(onChunk?: (done: number) => void, chunkSize = AGGREGATE_CHUNK): Promise<AggregateSummary> {
    const started = process.hrtime.bigint();
    this.stopRequested = false;
    const summary: AggregateSummary = { sessions: 0, visitors: 0, chunks: 0, seconds: 0, remaining: 0 };
    for (;;) {
      if (this.stopRequested) break;
      const done = await withDeadlockRetry(() =>
        this.ds.transaction('READ COMMITTED', (em) => this.aggregateChunk(em, chunkSize)),
      );
      if (done.sessions === 0) break;
      summary.sessions += done.sessions;
      summary.visitors += done.visitors;
      summary.chunks++;
      onChunk?.(summary.sessions);
    }
    summary.remaining = this.stopRequested ? await this.pending() : 0;
    summary.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return summary;
  }

  private async aggregateChunk(
    em: EntityManager,
    chunkSize: number,
  ): Promise<{ sessions: number; visitors: number }> {
    // Locked until commit: an import adding a hit to one of these sessions waits, then queues it again.
    const queued: Array<{ site_id: number; session_id: string }> = await em.query(
      `SELECT site_id, session_id FROM dirty_sessions ORDER BY site_id, session_id LIMIT ${Number(chunkSize)} FOR UPDATE`,
    );
    let visitors = 0;
    const bySite = new Map<number, string[]>();
    for (const q of queued) {
      const list = bySite.get(Number(q.site_id)) ?? [];
      list.push(q.session_id);
      bySite.set(Number(q.site_id), list);
    }
    for (const [siteId, sessionIds] of bySite) {
      const before: Array<{ v: string }> = await em.query(
        `SELECT DISTINCT visitor_id AS v FROM sessions WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      );
      await em.query(this.deriveSessionsSql(sessionIds.length), [siteId, ...sessionIds]);
      const after: Array<{ v: string }> = await em.query(
        `SELECT DISTINCT visitor_id AS v FROM sessions WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      );
      const touched = [...new Set([...before, ...after].map((r) => r.v))];
      await em.query(`DELETE FROM visitors WHERE site_id = ? AND visitor_id IN (${inList(touched.length)})`, [
        siteId,
        ...touched,
      ]);
      await em.query(
        `INSERT INTO visitors (site_id, visitor_id, first_session_at)
         SELECT site_id, visitor_id, MIN(started_at) FROM sessions
         WHERE site_id = ? AND visitor_id IN (${inList(touched.length)})
         GROUP BY site_id, visitor_id`,
        [siteId, ...touched],
      );
      visitors += touched.length;
      await em.query(
        `DELETE FROM dirty_sessions WHERE site_id = ? AND session_id IN (${inList(sessionIds.length)})`,
        [siteId, ...sessionIds],
      );
    }
    return { sessions: queued.length, visitors };
  }

  /**
   * One set-based statement: every queued session of a site recomputed from all its hits.
   * The first hit, first pageview and last pageview are picked by index-ordered LIMIT 1
   * subqueries (ix_hits_site_session is (site_id, session_id, ts, seq)). A single pass with
   * several ROW_NUMBER() windows was tried first and MariaDB 10.11 mixed up which row was
   * first when the windows had different PARTITION BY lists.
   */
  private deriveSessionsSql(count: number): string {
    const d = this.sql.dialect;
    const pick = (column: string, where: string, order: string) =>
      `(SELECT x.${column} FROM hits x WHERE x.site_id = a.site_id AND x.session_id = a.session_id${where} ORDER BY ${order} LIMIT 1)`;
    const firstOrder = HIT_ORDER.split(',')
      .map((c) => `x.${c.trim()}`)
      .join(', ');
    const lastOrder = HIT_ORDER.split(',')
      .map((c) => `x.${c.trim()} DESC`)
      .join(', ');
    return `${d.replaceInto('sessions', SESSION_COLUMNS)}
      SELECT a.site_id, a.session_id, f.visitor_id, a.started_at, a.ended_at,
        a.hits, a.pageviews, a.events, a.purchases,
        ${isBounceSql('a')},
        ${d.secondsBetween('a.started_at', 'a.ended_at')},
        ${pick('path', " AND x.type = 'pageview'", firstOrder)},
        ${pick('path', " AND x.type = 'pageview'", lastOrder)},
        ${SESSION_ATTRIBUTES.map((attr) => `COALESCE(f.${attr}, '${MISSING_ATTRIBUTE[attr]}')`).join(', ')}
      FROM (
        SELECT h.site_id, h.session_id, MIN(h.ts) AS started_at, MAX(h.ts) AS ended_at, COUNT(*) AS hits,
          SUM(h.type = 'pageview') AS pageviews, SUM(h.type = 'event') AS events, SUM(h.type = 'purchase') AS purchases
        FROM hits h
        WHERE h.site_id = ? AND h.session_id IN (${inList(count)})
        GROUP BY h.site_id, h.session_id
      ) a
      JOIN hits f ON f.seq = ${pick('seq', '', firstOrder)}`;
  }
}
