import { Public } from '@app/auth';
import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { MetricsService } from './metrics.service';

/**
 * Prometheus scrape endpoint, outside /api/v1 and without a key like /health: it holds no
 * site data, only counts by route. Keep it on the private network (docs/operations.md).
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    res.type(this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
