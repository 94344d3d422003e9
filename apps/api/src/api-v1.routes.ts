import type { Routes } from '@nestjs/core';
import { AnalyticsModule } from './analytics/analytics.module';
import { ConversionsModule } from './conversions/conversions.module';
import { EcommerceModule } from './ecommerce/ecommerce.module';
import { EventsModule } from './events/events.module';
import { SitesModule } from './sites/sites.module';

export const API_PREFIX = 'api/v1';

/** Feature modules served under /api/v1; health and docs live outside it. */
export const API_V1_MODULES = [
  SitesModule,
  AnalyticsModule,
  EventsModule,
  ConversionsModule,
  EcommerceModule,
];

export const API_ROUTES: Routes = [{ path: API_PREFIX, children: API_V1_MODULES }];
