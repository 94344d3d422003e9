import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiStandardErrors, PaginationQueryDto } from '@app/common';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SiteListDto } from './dto/site.dto';
import { SitesService } from './sites.service';

@ApiTags('sites')
@ApiBearerAuth()
@ApiStandardErrors()
@Controller('sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Get()
  @ApiOperation({ operationId: 'listSites', summary: 'The sites this key can read, ordered by id' })
  @ApiOkResponse({ type: SiteListDto })
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto): Promise<SiteListDto> {
    return this.sites.list(principal.userId, query.page, query.limit);
  }
}
