import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { rate, reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { ConversionsQueryDto } from './dto/conversions-query.dto';
import { ConversionsReportDto } from './dto/conversions-report.dto';
import { ConversionsQueries } from './conversions.queries';

@Injectable()
export class ConversionsService {
  constructor(
    private readonly queries: ConversionsQueries,
    private readonly config: AppConfig,
  ) {}

  async report(site: Site, query: ConversionsQueryDto): Promise<ConversionsReportDto> {
    const range = reportRange(query, site, this.config.limits.maxRangeDays);
    const goals = await this.queries.goalsOfSite(site.id);
    const counts = await this.queries.conversionCounts(
      site.id,
      range,
      goals.map((g) => ({ id: g.id, type: g.type, matchValue: g.match_value })),
    );
    return {
      data: {
        sessions: counts.sessions,
        converted_sessions: counts.convertedSessions,
        conversion_rate: rate(counts.convertedSessions, counts.sessions),
        goals: goals.map((g, i) => ({
          id: g.id,
          name: g.name,
          type: g.type,
          match: g.match_value,
          conversions: counts.goalConversions[i],
          conversion_rate: rate(counts.goalConversions[i], counts.sessions),
        })),
      },
      meta: reportMeta(site.id, range),
    };
  }
}
