import { rate, reportMeta, StatsQuery, StatsRepository } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { ConversionsResponseDto } from './dto/conversions-response.dto';
import { ConversionsQueries } from './conversions.queries';

@Injectable()
export class ConversionsService {
  constructor(
    private readonly queries: ConversionsQueries,
    private readonly stats: StatsRepository,
  ) {}

  async report(query: StatsQuery): Promise<ConversionsResponseDto> {
    const conversionGoals = await this.stats.conversionGoals(query.site.id);
    const { goals } = conversionGoals;
    const counts = await this.queries.conversionCounts(query, conversionGoals);
    return {
      data: {
        sessions: counts.sessions,
        converted_sessions: counts.convertedSessions,
        conversion_rate: rate(counts.convertedSessions, counts.sessions),
        goals: goals.map((g, i) => ({
          id: g.id,
          name: g.name,
          type: g.type,
          match: g.matchValue,
          conversions: counts.goalConversions[i],
          conversion_rate: rate(counts.goalConversions[i], counts.sessions),
        })),
      },
      meta: reportMeta(query),
    };
  }
}
