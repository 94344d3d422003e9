import {
  decideTable,
  eventRollupsMayAnswer,
  eventsThroughSessions,
  hitsOfSession,
  pageEventRollupsPage,
  queuedSessionSelected,
  ReportDb,
  ReportStatement,
  RolledUpPage,
  rollupParts,
  SESSION_PAGES,
  SESSION_PAGES_BY_SESSION,
  StatsQuery,
  where,
} from '@app/stats';
import { Injectable } from '@nestjs/common';
import type { SqlDialect } from '@app/db';
import { AliasedSelectQueryBuilder, RawBuilder, sql, SqlBool } from 'kysely';

export interface RegisteredEventRow {
  name: string;
  description: string | null;
  registered_at: Date;
  occurrences: number | string;
  sessions: number | string;
}

/**
 * A page of the site's registered events with their counts from `counts` (alias `c`: one row
 * per event id with `occurrences` and `sessions`), zeros where it has none, by occurrences desc
 * then name (unique per site, so the order is total).
 */
function registeredEventsWith(
  d: SqlDialect,
  siteId: number,
  counts: AliasedSelectQueryBuilder<
    { event_id: number; occurrences: number | string; sessions: number | string },
    'c'
  >,
  offset: number,
  limit: number,
) {
  return d.builder
    .selectFrom('registered_events as re')
    .leftJoin(counts, 'c.event_id', 're.id')
    .select([
      're.name',
      're.description',
      're.registered_at',
      sql<number | string>`COALESCE(c.occurrences, 0)`.as('occurrences'),
      sql<number | string>`COALESCE(c.sessions, 0)`.as('sessions'),
    ])
    .where('re.site_id', '=', siteId)
    .orderBy('occurrences', 'desc')
    .orderBy('re.name', 'asc')
    .limit(limit)
    .offset(offset)
    .compile();
}

/**
 * The site's event rollups over the range (rolledUpEventsPage), as rows of (name, occurrences,
 * sessions) to sum: its whole site days from the day rows and the links between two days, the
 * quarter hours around them from the 15-minute rows and links (rollupParts).
 */
function siteEventRows(query: StatsQuery) {
  const siteId = query.site.id;
  const rolledUp = rollupParts(query, 'event_rollups', 'event_day_rollups').map((part) => {
    const links = part.table === 'event_day_rollups' ? 'event_day_links' : 'event_links';
    const { startUtc: from, endUtc: to } = part.query.range;
    return sql`
        SELECT e.name, e.occurrences AS occurrences, e.sessions AS sessions FROM ${sql.table(part.table)} e
        WHERE e.site_id = ${siteId} AND e.bucket >= ${from} AND e.bucket < ${to}
        UNION ALL
        SELECT l.name, 0, -l.sessions FROM ${sql.table(links)} l
        WHERE l.site_id = ${siteId} AND l.to_bucket >= ${from} AND l.to_bucket < ${to} AND l.from_bucket >= ${query.range.startUtc}`;
  });
  return sql.join(rolledUp, sql` UNION ALL `);
}

/**
 * What the event rollups hold for the sessions queued for aggregation over the range, to take
 * off: each one's stored buckets (session_event_buckets, written in the transaction that wrote
 * the rollups), as (name, −hits, −1) per name and session; only where `also` holds of bucket row
 * `b`, when given.
 */
function queuedStoredBuckets(query: StatsQuery, also: RawBuilder<SqlBool> | null) {
  const siteId = query.site.id;
  const { startUtc, endUtc } = query.range;
  return sql`SELECT b.name, -SUM(b.hits), -1 FROM session_event_buckets b
        WHERE b.site_id = ${siteId} AND b.session_id IN (SELECT q.session_id FROM dirty_sessions q WHERE q.site_id = ${siteId}) AND b.bucket >= ${startUtc} AND b.bucket < ${endUtc}${
          also === null
            ? sql``
            : sql`
          AND ${also}`
        }
        GROUP BY b.name, b.session_id`;
}

/** registeredEventsWith over `rows` of (name, occurrences, sessions), summed by registered event. */
function registeredEventsSummed(
  d: SqlDialect,
  siteId: number,
  rows: RawBuilder<unknown>,
  offset: number,
  limit: number,
) {
  const counts = d.builder
    .selectFrom(sql`(${rows})`.as('x'))
    .innerJoin('registered_events as r', (j) =>
      j.on('r.site_id', '=', siteId).on(sql<SqlBool>`r.name = x.name`),
    )
    .select([
      'r.id as event_id',
      sql<number | string>`SUM(x.occurrences)`.as('occurrences'),
      sql<number | string>`SUM(x.sessions)`.as('sessions'),
    ])
    .groupBy('r.id')
    .as('c');
  return registeredEventsWith(d, siteId, counts, offset, limit);
}

export const eventsStatements = {
  registeredEventCount(siteId: number): ReportStatement<{ n: number | string }> {
    return (d) =>
      d.builder
        .selectFrom('registered_events')
        .select(sql<number | string>`COUNT(*)`.as('n'))
        .where('site_id', '=', siteId)
        .compile();
  },

  /**
   * One page of the site's registered events with their occurrences (event hits whose own ts is
   * in the range) and distinct sessions, by occurrences desc then name (unique per site, so the
   * order is total). Registered events without hits are listed with zeros.
   */
  registeredEventsPage(
    query: StatsQuery,
    offset: number,
    limit: number,
  ): ReportStatement<RegisteredEventRow> {
    decideTable(query, 'hits');
    const siteId = query.site.id;
    return (d) => {
      // Per event and session first, then per event: the distinct sessions are the groups of
      // the first step. MariaDB's COUNT(DISTINCT session_id) per name sorted 185,000 rows of
      // long utf8mb4 keys on disk (6 s at 1M pageviews); this takes 2 s. Joined on step_key,
      // an event's name (definitions.ts), so that each registered name reads its own hits
      // from HITS_BY_STEP (site, type, step_key, …, ts, seq, session_id) alone.
      //
      // Under filters, the event hits are read through the selected sessions that can hold
      // them (eventsThroughSessions: a settled session's from its event buckets), not each
      // event hit of the range tested for its session: at 10M pageviews under
      // page==/blog/post-17 (17,235 sessions) a test of each of ~2M event hits.
      type Counts = AliasedSelectQueryBuilder<
        { event_id: number; occurrences: number | string; sessions: number | string },
        'c'
      >;
      let counts: Counts;
      if (query.filters.length === 0) {
        const perSession = d.builder
          .selectFrom('registered_events as r')
          .innerJoin('hits as h', (j) =>
            j.onRef('h.site_id', '=', 'r.site_id').onRef('h.step_key', '=', 'r.name'),
          )
          .select(['r.id as event_id', 'h.session_id', sql<number | string>`COUNT(*)`.as('n')])
          .where(where.hits(query, 'h', 'event'))
          .groupBy(['r.id', 'h.session_id'])
          .as('x');
        counts = d.builder
          .selectFrom(perSession)
          .select([
            'x.event_id',
            sql<number | string>`SUM(x.n)`.as('occurrences'),
            sql<number | string>`COUNT(*)`.as('sessions'),
          ])
          .groupBy('x.event_id')
          .as('c');
      } else {
        counts = d.builder
          .selectFrom('registered_events as r')
          .innerJoin(
            sql<{
              step_key: string;
              occurrences: number | string;
              sessions: number | string;
            }>`(${eventsThroughSessions(d, query)})`.as('h'),
            (j) => j.onRef('h.step_key', '=', 'r.name'),
          )
          .select([
            'r.id as event_id',
            sql<number | string>`SUM(h.occurrences)`.as('occurrences'),
            sql<number | string>`SUM(h.sessions)`.as('sessions'),
          ])
          .where('r.site_id', '=', siteId)
          .groupBy('r.id')
          .as('c');
      }
      return registeredEventsWith(d, siteId, counts, offset, limit);
    };
  },

  /**
   * The same page from the event rollups (when eventRollupsMayAnswer): per name, the hits of
   * the range's buckets, and its distinct sessions as Σ sessions per bucket − Σ links between
   * consecutive buckets of a session inside the range (libs/stats/src/rollups/event-rollup.ts);
   * plus, for the sessions queued for aggregation, their event hits of the range as they are
   * now minus what the rollups hold for them. The range's whole site days are read from the day
   * rows (a session once per day) and the links between two days, the quarter hours around them
   * from the 15-minute rows and links (eventDayDeltas).
   */
  rolledUpEventsPage(query: StatsQuery, offset: number, limit: number): ReportStatement<RegisteredEventRow> {
    const siteId = query.site.id;
    const { startUtc, endUtc } = query.range;
    return (d) => {
      const queued = sql`SELECT q.session_id FROM dirty_sessions q WHERE q.site_id = ${siteId}`;
      const rows = sql`${siteEventRows(query)}
        UNION ALL
        SELECT h.step_key, COUNT(*), 1 FROM ${hitsOfSession('h')}
        WHERE h.site_id = ${siteId} AND h.session_id IN (${queued}) AND h.type = 'event' AND h.ts >= ${startUtc} AND h.ts < ${endUtc}
        GROUP BY h.step_key, h.session_id
        UNION ALL
        ${queuedStoredBuckets(query, null)}`;
      return registeredEventsSummed(d, siteId, rows, offset, limit);
    };
  },

  /**
   * The same page under `page==` or `page!=` one whole path (pageEventRollupsPage) from the page
   * event rollups: per name, the hits of the range's 15-minute buckets among the sessions with a
   * pageview of the path, and their distinct sessions as Σ sessions − Σ links inside the range,
   * as rolledUpEventsPage counts them; under `page!=`, the site's event rollups less those. For
   * the sessions queued for aggregation: their event hits of the range as they are now where they
   * are selected now (queuedSessionSelected), minus what the rollups hold for them where they
   * were selected when last derived: had a row under the path (`page==`) or none (`page!=`) in
   * session_pages, written in the same transaction as the rollups and session_event_buckets.
   */
  rolledUpPageEventsPage(
    query: StatsQuery,
    page: RolledUpPage,
    offset: number,
    limit: number,
  ): ReportStatement<RegisteredEventRow> {
    const siteId = query.site.id;
    const { startUtc, endUtc } = query.range;
    const { path, without } = page;
    // Under `page!=`, the path's rows are taken from the site's.
    const sign = without ? sql.raw('-') : sql.raw('');
    const unsign = without ? sql.raw('') : sql.raw('-');
    return (d) => {
      const selected = queuedSessionSelected(query, 'qs');
      const hadRow = sql<SqlBool>`EXISTS (SELECT 1 FROM ${sql.raw(d.tableWithIndex(SESSION_PAGES, 'fs', SESSION_PAGES_BY_SESSION))}
            WHERE fs.site_id = b.site_id AND fs.session_id = b.session_id AND fs.page_key = ${path})`;
      const rows = sql`${without ? sql`${siteEventRows(query)} UNION ALL` : sql``}
        SELECT e.name, ${sign}e.occurrences AS occurrences, ${sign}e.sessions AS sessions FROM page_event_rollups e
        WHERE e.site_id = ${siteId} AND e.page_key = ${path} AND e.bucket >= ${startUtc} AND e.bucket < ${endUtc}
        UNION ALL
        SELECT l.name, 0, ${unsign}l.sessions FROM page_event_links l
        WHERE l.site_id = ${siteId} AND l.page_key = ${path} AND l.to_bucket >= ${startUtc} AND l.to_bucket < ${endUtc} AND l.from_bucket >= ${startUtc}
        UNION ALL
        SELECT h.step_key, COUNT(*), 1 FROM dirty_sessions q
          ${sql.raw(d.orderedJoin)} sessions qs ON qs.site_id = q.site_id AND qs.session_id = q.session_id${selected === null ? sql`` : sql` AND ${selected}`}
          ${sql.raw(d.orderedJoin)} ${hitsOfSession('h')} ON h.site_id = ${siteId} AND h.session_id = q.session_id
        WHERE q.site_id = ${siteId} AND h.type = 'event' AND h.ts >= ${startUtc} AND h.ts < ${endUtc}
        GROUP BY h.step_key, h.session_id
        UNION ALL
        ${queuedStoredBuckets(query, without ? sql<SqlBool>`NOT ${hadRow}` : hadRow)}`;
      return registeredEventsSummed(d, siteId, rows, offset, limit);
    };
  },
};

/** The SQL behind GET /sites/{id}/events. */
@Injectable()
export class EventsQueries {
  constructor(private readonly db: ReportDb) {}

  async registeredEventCount(siteId: number): Promise<number> {
    const rows = await this.db.run(eventsStatements.registeredEventCount(siteId));
    return Number(rows[0]?.n ?? 0);
  }

  registeredEventsPage(query: StatsQuery, offset: number, limit: number): Promise<RegisteredEventRow[]> {
    const page = pageEventRollupsPage(query);
    return this.db.run(
      eventRollupsMayAnswer(query)
        ? eventsStatements.rolledUpEventsPage(query, offset, limit)
        : page !== undefined
          ? eventsStatements.rolledUpPageEventsPage(query, page, offset, limit)
          : eventsStatements.registeredEventsPage(query, offset, limit),
    );
  }
}
