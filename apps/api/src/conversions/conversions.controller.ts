import { CurrentSite, SiteScoped } from '@app/auth';
import { ApiStandardErrors, CsvExport } from '@app/common';
import type { Site } from '@app/db';
import { StatsQueryParser } from '@app/stats';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ConversionsQueryDto } from './dto/conversions-query.dto';
import { ConversionsResponseDto } from './dto/conversions-response.dto';
import { ConversionsService } from './conversions.service';
import { CONVERSIONS_CSV } from './conversions.csv';
import { CachedReport } from '../report-cache/cached-report.decorator';

@ApiTags('conversions')
@ApiBearerAuth()
@ApiStandardErrors()
@SiteScoped()
@Controller('sites/:id/conversions')
export class ConversionsController {
  constructor(
    private readonly conversions: ConversionsService,
    private readonly parser: StatsQueryParser,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getConversions',
    summary: "Sessions of the range that converted the site's goals",
    description:
      'Counts the sessions that started in the range (session start = its first hit). A session ' +
      '*converts* a goal when any of its hits matches it: an `event` goal matches event hits with ' +
      'that name; a `path` goal matches pageviews whose path equals `match`, or starts with it ' +
      'without its trailing `*`. Every hit of the session counts, also one after the range end: ' +
      'conversions belong to the range containing the session start. A session counts once per ' +
      'goal however many matching hits it has, and once in `converted_sessions` however many goals ' +
      'it converted. Goals are ordered by id. Counts are exact.',
  })
  @CachedReport()
  @CsvExport(CONVERSIONS_CSV)
  async report(
    @CurrentSite() site: Site,
    @Query() query: ConversionsQueryDto,
  ): Promise<ConversionsResponseDto> {
    return this.conversions.report(await this.parser.parse(site, query));
  }
}
