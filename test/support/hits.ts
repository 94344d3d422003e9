/** Builders of hits in the NDJSON contract format (SPEC §1). */
let seq = 0;

export interface HitOverrides {
  [field: string]: unknown;
}

export function pageview(siteId: number, session: string, ts: string, path: string, o: HitOverrides = {}) {
  return {
    id: `pv-${++seq}`,
    type: 'pageview',
    site_id: siteId,
    ts,
    session_id: session,
    visitor_id: `v-${session}`,
    path,
    ...o,
  };
}

export function event(siteId: number, session: string, ts: string, name: string, o: HitOverrides = {}) {
  return {
    id: `ev-${++seq}`,
    type: 'event',
    site_id: siteId,
    ts,
    session_id: session,
    visitor_id: `v-${session}`,
    name,
    ...o,
  };
}

export function purchase(
  siteId: number,
  session: string,
  ts: string,
  orderId: string,
  revenue: string | number,
  o: HitOverrides = {},
) {
  return {
    id: `pu-${++seq}`,
    type: 'purchase',
    site_id: siteId,
    ts,
    session_id: session,
    visitor_id: `v-${session}`,
    order_id: orderId,
    revenue,
    currency: 'USD',
    ...o,
  };
}

export const ndjson = (hits: object[]) => hits.map((h) => JSON.stringify(h)).join('\n') + '\n';
