import { decideTable, ReportDb, ReportStatement, StatsQuery, where } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { sql } from 'kysely';

export interface RegisteredEventRow {
  name: string;
  description: string | null;
  registered_at: Date;
  occurrences: number | string;
  sessions: number | string;
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
      const counts = d.builder
        .selectFrom('hits as h')
        .select([
          'h.name',
          sql<number | string>`COUNT(*)`.as('occurrences'),
          sql<number | string>`COUNT(DISTINCT h.session_id)`.as('sessions'),
        ])
        .where(where.hits(query, 'h', 'event'))
        .where(
          'h.name',
          'in',
          d.builder.selectFrom('registered_events as r').select('r.name').where('r.site_id', '=', siteId),
        )
        .groupBy('h.name')
        .as('c');
      return d.builder
        .selectFrom('registered_events as re')
        .leftJoin(counts, 'c.name', 're.name')
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
    return this.db.run(eventsStatements.registeredEventsPage(query, offset, limit));
  }
}
