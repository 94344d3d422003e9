import { CurrentSite, SiteScoped } from '@app/auth';
import { ApiStandardErrors, CsvExport } from '@app/common';
import type { Site } from '@app/db';
import { StatsQueryParser } from '@app/stats';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EcommerceQueryDto } from './dto/ecommerce-query.dto';
import { EcommerceResponseDto } from './dto/ecommerce-response.dto';
import { EcommerceService } from './ecommerce.service';
import { ECOMMERCE_CSV } from './ecommerce.csv';
import { CachedReport } from '../report-cache/cached-report.decorator';

@ApiTags('ecommerce')
@ApiBearerAuth()
@ApiStandardErrors()
@SiteScoped()
@Controller('sites/:id/ecommerce')
export class EcommerceController {
  constructor(
    private readonly ecommerce: EcommerceService,
    private readonly parser: StatsQueryParser,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getEcommerce',
    summary: 'Revenue, orders, top products and revenue per day',
    description:
      'Orders are purchases deduplicated by `order_id` (the first imported purchase hit wins); ' +
      '`revenue`, `orders`, `items_sold`, `top_products` and `revenue_by_day` count the orders whose ' +
      'own timestamp lies in the range, placed on the calendar days of the report timezone. ' +
      '`purchasing_sessions` and `conversion_rate` count the sessions that started in the range and ' +
      'contain an order. Money is summed exactly as decimals in the site currency and given with 2 ' +
      'decimals; product revenue is Σ quantity × price of its item lines, which need not add up to ' +
      'the order revenue the tracker sent. All figures are exact.',
  })
  @CachedReport()
  @CsvExport(ECOMMERCE_CSV)
  async report(@CurrentSite() site: Site, @Query() query: EcommerceQueryDto): Promise<EcommerceResponseDto> {
    return this.ecommerce.report(await this.parser.parse(site, query), query);
  }
}
