import {
  attributeOrMissing,
  firstHitOfSession,
  hitMetrics,
  hitOrderSql,
  HITS_BY_TYPE_TIME,
  pageviewMetrics,
  ReportDb,
  ReportStatement,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';

export interface RecentPageviewRow {
  ts: Date;
  path: string;
  country: string;
  device: string;
}

export interface RecentEventRow {
  ts: Date;
  name: string;
  path: string | null;
}

export interface ActivePageRow {
  value: string;
  active_visitors: number;
}

/** A realtime window: the site's hits stamped within [since, until]. */
export interface LiveWindow {
  siteId: number;
  since: Date;
  until: Date;
}

const newestFirst = (alias: string) => sql.raw(hitOrderSql(alias, 'desc'));

/**
 * Realtime reads hits only, never the derived tables, so it shows what was imported a moment
 * ago even before the aggregator has run. Windows are [since, now]: hits stamped after the
 * server's clock are not current yet.
 */
export const realtimeStatements = {
  /** Hits of every type, read as HITS_BY_TYPE_TIME's three ranges (SQLite would pick another index). */
  activeVisitors(w: LiveWindow): ReportStatement<{ n: number | string }> {
    return (d) => {
      const hits = sql.raw(d.tableWithIndex('hits', 'h', HITS_BY_TYPE_TIME));
      const live = where.liveHits(w.siteId, w.since, w.until, 'h');
      return sql<{
        n: number | string;
      }>`SELECT ${hitMetrics('h').visitors} AS n FROM ${hits} WHERE ${live}`.compile(d.builder);
    };
  },

  pageviewCount(w: LiveWindow): ReportStatement<{ n: number | string }> {
    return (d) =>
      d.builder
        .selectFrom('hits as h')
        .select(pageviewMetrics('h').pageviews.as('n'))
        .where(where.liveHits(w.siteId, w.since, w.until, 'h', 'pageview'))
        .compile();
  },

  /** Newest first; country and device come from the first hit of each pageview's session. */
  recentPageviews(w: LiveWindow, limit: number): ReportStatement<RecentPageviewRow> {
    return (d) =>
      d.builder
        .selectFrom(
          d.builder
            .selectFrom('hits as h')
            .select(['h.site_id', 'h.session_id', 'h.ts', 'h.seq', 'h.path'])
            .where(where.liveHits(w.siteId, w.since, w.until, 'h', 'pageview'))
            .orderBy(newestFirst('h'))
            .limit(limit)
            .as('h'),
        )
        .select([
          'h.ts',
          'h.path',
          attributeOrMissing('country', firstHitOfSession(d, 'country', 'h')).as('country'),
          attributeOrMissing('device', firstHitOfSession(d, 'device', 'h')).as('device'),
        ])
        .orderBy(newestFirst('h'))
        .compile();
  },

  recentEvents(w: LiveWindow, limit: number): ReportStatement<RecentEventRow> {
    return (d) =>
      d.builder
        .selectFrom('hits as h')
        .select(['h.ts', 'h.name', 'h.path'])
        .where(where.liveHits(w.siteId, w.since, w.until, 'h', 'event'))
        .orderBy(newestFirst('h'))
        .limit(limit)
        .compile();
  },

  activePages(
    w: LiveWindow,
    limit: number,
  ): ReportStatement<{ value: string; active_visitors: number | string }> {
    return (d) =>
      d.builder
        .selectFrom('hits as h')
        .select([sql<string>`h.path`.as('value'), hitMetrics('h').visitors.as('active_visitors')])
        .where(where.liveHits(w.siteId, w.since, w.until, 'h', 'pageview'))
        .groupBy('h.path')
        .orderBy('active_visitors', 'desc')
        .orderBy('value', 'asc')
        .limit(limit)
        .compile();
  },
};

@Injectable()
export class RealtimeQueries {
  constructor(private readonly db: ReportDb) {}

  async activeVisitors(w: LiveWindow): Promise<number> {
    const [row] = await this.db.run(realtimeStatements.activeVisitors(w));
    return Number(row.n);
  }

  async pageviewCount(w: LiveWindow): Promise<number> {
    const [row] = await this.db.run(realtimeStatements.pageviewCount(w));
    return Number(row.n);
  }

  recentPageviews(w: LiveWindow, limit: number): Promise<RecentPageviewRow[]> {
    return this.db.run(realtimeStatements.recentPageviews(w, limit));
  }

  recentEvents(w: LiveWindow, limit: number): Promise<RecentEventRow[]> {
    return this.db.run(realtimeStatements.recentEvents(w, limit));
  }

  async activePages(w: LiveWindow, limit: number): Promise<ActivePageRow[]> {
    const rows = await this.db.run(realtimeStatements.activePages(w, limit));
    return rows.map((r) => ({ value: r.value, active_visitors: Number(r.active_visitors) }));
  }
}
