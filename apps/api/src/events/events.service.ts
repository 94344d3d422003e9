import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { EventsQueryDto } from './dto/events-query.dto';
import { EventListDto } from './dto/event-list.dto';
import { EventsQueries } from './events.queries';

@Injectable()
export class EventsService {
  constructor(
    private readonly queries: EventsQueries,
    private readonly config: AppConfig,
  ) {}

  async list(site: Site, query: EventsQueryDto): Promise<EventListDto> {
    const range = reportRange(query, site, this.config.limits.maxRangeDays);
    const { page, limit } = query;
    const [rows, total] = await Promise.all([
      this.queries.registeredEventsPage(site.id, range, (page - 1) * limit, limit),
      this.queries.registeredEventCount(site.id),
    ]);
    return {
      data: rows.map((r) => ({
        name: r.name,
        description: r.description,
        registered_at: r.registered_at.toISOString(),
        occurrences: Number(r.occurrences),
        sessions: Number(r.sessions),
      })),
      meta: { ...reportMeta(site.id, range), page, limit, total },
    };
  }
}
