import { CurrentSite, SiteScoped } from '@app/auth';
import { ApiStandardErrors, CsvExport } from '@app/common';
import type { Site } from '@app/db';
import { StatsQueryParser } from '@app/stats';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EventsQueryDto } from './dto/events-query.dto';
import { EventsResponseDto } from './dto/events-response.dto';
import { EventsService } from './events.service';
import { EVENTS_CSV } from './events.csv';
import { CachedReport } from '../report-cache/cached-report.decorator';

@ApiTags('events')
@ApiBearerAuth()
@ApiStandardErrors()
@SiteScoped()
@Controller('sites/:id/events')
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly parser: StatsQueryParser,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Registered events with their occurrences in the range',
    description:
      'The custom events registered for the site (`events:register`), ordered by `occurrences` desc, ' +
      'then `name` asc (binary, i.e. code-point order). `occurrences` counts the event hits with that ' +
      'name whose own timestamp lies in the range; `sessions` the distinct sessions they belong to. ' +
      'Registered events without hits are listed with 0; hits of unregistered names are not listed. ' +
      'Counts are exact.',
  })
  @CachedReport()
  @CsvExport(EVENTS_CSV)
  async list(@CurrentSite() site: Site, @Query() query: EventsQueryDto): Promise<EventsResponseDto> {
    return this.events.report(await this.parser.parse(site, query), query);
  }
}
