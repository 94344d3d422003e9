import { ReportDb, ReportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';

export interface RegisteredEventRow {
  name: string;
  description: string | null;
  registered_at: Date;
  occurrences: number | string;
  sessions: number | string;
}

/** The SQL behind GET /sites/{id}/events. */
@Injectable()
export class EventsQueries {
  constructor(private readonly db: ReportDb) {}

  async registeredEventCount(siteId: number): Promise<number> {
    const rows = await this.db.select<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM registered_events WHERE site_id = ?',
      [siteId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * One page of the site's registered events with their occurrences (event hits whose own ts is
   * in the range) and distinct sessions, by occurrences desc then name (unique per site, so the
   * order is total). Registered events without hits are listed with zeros.
   */
  registeredEventsPage(
    siteId: number,
    range: ReportRange,
    offset: number,
    limit: number,
  ): Promise<RegisteredEventRow[]> {
    return this.db.select<RegisteredEventRow>(
      `SELECT re.name, re.description, re.registered_at,
              COALESCE(c.occurrences, 0) AS occurrences, COALESCE(c.sessions, 0) AS sessions
         FROM registered_events re
         LEFT JOIN (
           SELECT h.name, COUNT(*) AS occurrences, COUNT(DISTINCT h.session_id) AS sessions
             FROM hits h
            WHERE h.site_id = ? AND h.type = 'event' AND h.ts >= ? AND h.ts < ?
              AND h.name IN (SELECT r.name FROM registered_events r WHERE r.site_id = ?)
            GROUP BY h.name
         ) c ON c.name = re.name
        WHERE re.site_id = ?
        ORDER BY occurrences DESC, re.name ASC
        LIMIT ? OFFSET ?`,
      [siteId, range.startUtc, range.endUtc, siteId, siteId, limit, offset],
    );
  }
}
