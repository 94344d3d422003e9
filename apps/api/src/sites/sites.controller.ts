import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiStandardErrors, CsvExport, PaginationQueryDto } from '@app/common';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SitesResponseDto } from './dto/site.dto';
import { SitesService } from './sites.service';
import { SITES_CSV } from './sites.csv';

@ApiTags('sites')
@ApiBearerAuth()
@ApiStandardErrors()
@Controller('sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Get()
  @ApiOperation({ operationId: 'listSites', summary: 'The sites this key can read, ordered by id' })
  @CsvExport(SITES_CSV)
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PaginationQueryDto,
  ): Promise<SitesResponseDto> {
    return this.sites.list(principal.userId, query.page, query.limit);
  }
}
