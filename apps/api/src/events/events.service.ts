import { reportMeta, StatsQuery } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { EventsQueryDto } from './dto/events-query.dto';
import { EventsResponseDto } from './dto/events-response.dto';
import { EventsQueries } from './events.queries';

@Injectable()
export class EventsService {
  constructor(private readonly queries: EventsQueries) {}

  async report(
    query: StatsQuery,
    params: Pick<EventsQueryDto, 'page' | 'limit'>,
  ): Promise<EventsResponseDto> {
    const { page, limit } = params;
    const [rows, total] = await Promise.all([
      this.queries.registeredEventsPage(query, (page - 1) * limit, limit),
      this.queries.registeredEventCount(query.site.id),
    ]);
    return {
      data: rows.map((r) => ({
        name: r.name,
        description: r.description,
        registered_at: r.registered_at.toISOString(),
        occurrences: Number(r.occurrences),
        sessions: Number(r.sessions),
      })),
      meta: { ...reportMeta(query), page, limit, total },
    };
  }
}
