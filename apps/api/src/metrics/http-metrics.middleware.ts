import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { MetricsService } from './metrics.service';

/**
 * Counts and times every request once it is answered. The route label is the matched route
 * template (`/api/v1/sites/:id/events`), never the raw URL, so label cardinality stays bounded.
 */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const routePath = (req.route as { path?: unknown } | undefined)?.path;
      // Unknown paths end in Nest's catch-all route, whose template is a wildcard.
      const route =
        typeof routePath === 'string' && !routePath.includes('{*')
          ? `${req.baseUrl ?? ''}${routePath}`
          : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      this.metrics.requests.inc(labels);
      this.metrics.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  }
}
