import {
  attributeOrMissing,
  firstHitOfSession,
  hitMetrics,
  hitOrderSql,
  pageviewMetrics,
  pageviewRollupMetrics,
  ReportDb,
  ReportStatement,
  ROLLUP_BUCKET_MS,
  TimeBound,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import { sql, SqlBool } from 'kysely';

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

/** Raw hits stamped between two bounds, counted with `sign` (+1 or -1). */
export interface RawPart {
  sign: 1 | -1;
  from: TimeBound;
  to: TimeBound;
}

/**
 * A live window [since, until] as the pageview rollup's quarter hours `first` … `last` (bucket
 * starts, both counted), corrected by raw hits: the part of the first quarter hour before
 * `since` subtracted, or, when the window holds less than half of that quarter hour and at
 * least one more, that quarter hour left out and the window's part of it added; and the hits of
 * the last quarter hour stamped after `until` (not current yet, so almost always none)
 * subtracted. Every part is a range of hit times, read raw, of at most 7.5 minutes but the last.
 */
export function liveWindowParts(since: Date, until: Date): { first: Date; last: Date; raw: RawPart[] } {
  const quarter = ROLLUP_BUCKET_MS;
  let first = Math.floor(since.getTime() / quarter) * quarter;
  const last = Math.floor(until.getTime() / quarter) * quarter;
  const raw: RawPart[] = [];
  if (first < last && since.getTime() - first > quarter / 2) {
    raw.push({
      sign: 1,
      from: { at: since, inclusive: true },
      to: { at: new Date(first + quarter), inclusive: false },
    });
    first += quarter;
  } else if (since.getTime() > first) {
    raw.push({
      sign: -1,
      from: { at: new Date(first), inclusive: true },
      to: { at: since, inclusive: false },
    });
  }
  raw.push({
    sign: -1,
    from: { at: until, inclusive: false },
    to: { at: new Date(last + quarter), inclusive: false },
  });
  return { first: new Date(first), last: new Date(last), raw };
}

/**
 * Realtime reads hits, and what `import` keeps with them in the same transaction (the pageview
 * rollup, the last hour's `live_hits`), never what the aggregator derives, so it shows what was
 * imported a moment ago even before the aggregator has run. Windows are [since, now]: hits
 * stamped after the server's clock are not current yet.
 */
export const realtimeStatements = {
  /** Visitors with a hit of any type in the window, from `live_hits` (a range of its key). */
  activeVisitors(w: LiveWindow): ReportStatement<{ n: number | string }> {
    return (d) =>
      d.builder
        .selectFrom('live_hits as h')
        .select(hitMetrics('h').visitors.as('n'))
        .where(where.liveHitRows(w.siteId, w.since, w.until, 'h'))
        .compile();
  },

  /**
   * Pageviews of the window from the pageview rollup (`hit_rollups`, quarter hours of the hit's
   * own ts, kept by `import` in each batch's transaction, so as live as the hits themselves) and
   * the raw pageviews of the window's edges (liveWindowParts): at 10M pageviews a month, the
   * busiest 30 minutes hold ~17,000 pageviews, and the edges an eighth of them on average.
   */
  pageviewCount(w: LiveWindow): ReportStatement<{ n: number | string }> {
    return (d) => {
      const parts = liveWindowParts(w.since, w.until);
      const rolledUp = d.builder
        .selectFrom('hit_rollups as r')
        .select(pageviewRollupMetrics('r').pageviews.as('n'))
        .where(where.hitRollupBuckets(w.siteId, parts.first, parts.last, 'r'));
      const raw = parts.raw.map((part) => {
        const count = d.builder
          .selectFrom('hits as h')
          .select(pageviewMetrics('h').pageviews.as('n'))
          .where(where.hitsStamped(w.siteId, part.from, part.to, 'h', 'pageview'));
        return part.sign > 0 ? sql` + (${count})` : sql` - (${count})`;
      });
      return sql<{ n: number | string }>`SELECT (${rolledUp})${sql.join(raw, sql``)} AS n`.compile(d.builder);
    };
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

  /**
   * The pages with the most visitors in the window, from `live_hits`: grouped by the path's MD5
   * (a 2,048-character path would make MariaDB's temporary table a disk table), and only the
   * paths that can still make the top `limit` (those ranked `limit` or better by visitors, ties
   * included) named by one of their rows, then ranked by visitors and path.
   */
  activePages(
    w: LiveWindow,
    limit: number,
  ): ReportStatement<{ value: string; active_visitors: number | string }> {
    return (d) => {
      const visitors = hitMetrics('h').visitors;
      const counted = d.builder
        .selectFrom('live_hits as h')
        .select([
          'h.path_hash',
          visitors.as('active_visitors'),
          sql<number>`RANK() OVER (ORDER BY ${visitors} DESC)`.as('by_visitors'),
        ])
        .where(where.liveHitRows(w.siteId, w.since, w.until, 'h', 'pageview'))
        .groupBy('h.path_hash')
        .as('c');
      const path = d.builder
        .selectFrom('live_hits as n')
        .select('n.path')
        .where(where.liveHitRows(w.siteId, w.since, w.until, 'n', 'pageview'))
        .where(sql<SqlBool>`${sql.ref('n.path_hash')} = ${sql.ref('c.path_hash')}`)
        .limit(1);
      return d.builder
        .selectFrom(counted)
        .select([sql<string>`(${path})`.as('value'), 'c.active_visitors'])
        .where('c.by_visitors', '<=', limit)
        .orderBy('c.active_visitors', 'desc')
        .orderBy('value', 'asc')
        .limit(limit)
        .compile();
    };
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
