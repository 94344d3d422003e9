import type { HitType } from '@app/stats';

export { HIT_TYPES } from '@app/stats';
export type { HitType };

export interface OrderItem {
  sku: string;
  name: string | null;
  quantity: number;
  /** Decimal string with 2 decimals, e.g. "12.30". */
  price: string;
}

/** A validated hit, ready to store (SPEC §1). Money is a decimal string, never a float. */
export interface Hit {
  id: string;
  type: HitType;
  siteId: number;
  ts: Date;
  sessionId: string;
  visitorId: string;
  path: string | null;
  channel: string | null;
  source: string | null;
  country: string | null;
  device: string | null;
  browser: string | null;
  timeOnPageSeconds: number | null;
  scrollDepth: number | null;
  name: string | null;
  orderId: string | null;
  revenue: string | null;
  currency: string | null;
  items: OrderItem[];
}

/** What the parser needs to know of a site. */
export interface SiteFacts {
  id: number;
  currency: string;
}
