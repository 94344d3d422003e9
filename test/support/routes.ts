import type { INestApplication } from '@nestjs/common';
import { buildOpenApiDocument } from '../../apps/api/src/openapi';

/**
 * A valid query for each route that needs one. Every path of the OpenAPI document must be
 * listed here, so a new route cannot slip past the auth matrix.
 */
export const SAMPLE_QUERIES: Record<string, string> = {
  '/api/v1/sites': '',
  '/api/v1/sites/{id}/analytics/overview': 'from=2026-01-01&to=2026-01-31&limit=5&compare=previous_period',
  '/api/v1/sites/{id}/analytics/breakdown-timeseries':
    'metric=sessions&dimension=channel&from=2026-01-01&to=2026-01-31&interval=week&limit=3',
  '/api/v1/sites/{id}/analytics/engagement': 'from=2026-01-01&to=2026-01-31',
  '/api/v1/sites/{id}/analytics/realtime': '',
  '/api/v1/sites/{id}/analytics/funnel':
    'steps=%5B%7B%22type%22%3A%22pageview%22%2C%22path%22%3A%22%2Fpricing%22%7D%5D&window_hours=24&from=2026-01-01&to=2026-01-31',
  '/api/v1/sites/{id}/events': 'from=2026-01-01&to=2026-01-31&page=1&limit=10',
  '/api/v1/sites/{id}/conversions': 'from=2026-01-01&to=2026-01-31',
  '/api/v1/sites/{id}/ecommerce': 'from=2026-01-01&to=2026-01-31&limit=5',
};

export interface RouteUnderTest {
  template: string;
  siteScoped: boolean;
  url: (siteId: number | string) => string;
}

/** Every GET route the running app documents. */
export function documentedRoutes(app: INestApplication): RouteUnderTest[] {
  const document = buildOpenApiDocument(app);
  return Object.keys(document.paths).map((template) => {
    if (!(template in SAMPLE_QUERIES))
      throw new Error(`add a sample query for ${template} to test/support/routes.ts`);
    const query = SAMPLE_QUERIES[template];
    return {
      template,
      siteScoped: template.includes('{id}'),
      url: (siteId) => template.replace('{id}', String(siteId)) + (query ? `?${query}` : ''),
    };
  });
}
