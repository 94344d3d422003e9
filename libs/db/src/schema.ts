import type { ColumnType } from 'kysely';

/**
 * The tables the statistics engine reads, as the SQL builder sees them. The migrations are the
 * source of truth; this only types what queries select and compare.
 */
type Decimal = ColumnType<string, string | number, string | number>;
type Count = ColumnType<number, number, number>;

export interface HitsTable {
  seq: number;
  site_id: number;
  hit_id: string;
  type: 'pageview' | 'event' | 'purchase';
  ts: Date;
  session_id: string;
  visitor_id: string;
  path: string | null;
  channel: string | null;
  source: string | null;
  country: string | null;
  device: string | null;
  browser: string | null;
  time_on_page_seconds: Decimal | null;
  scroll_depth: number | null;
  name: string | null;
  order_id: string | null;
  revenue: Decimal | null;
  currency: string | null;
  /** Virtual: the event's name or the pageview's path cut to 255 characters (goal and step matching). */
  step_key: ColumnType<string | null, never, never>;
}

export interface SessionsTable {
  site_id: number;
  session_id: string;
  visitor_id: string;
  started_at: Date;
  ended_at: Date;
  hits: Count;
  pageviews: Count;
  events: Count;
  purchases: Count;
  is_bounce: number;
  duration_seconds: Decimal;
  entry_path: string | null;
  exit_path: string | null;
  channel: string;
  source: string;
  country: string;
  device: string;
  browser: string;
  /** 1 when the session held an order as `aggregate` last derived it (migration 1765900000000). */
  purchased: number;
  /** Generated: the MD5 of the session's attributeKey, as the attribute rollups key it (migration 1767700000000). */
  attributes_hash: ColumnType<Buffer, never, never>;
  /** Generated: the MD5 of entry_path and of exit_path (NULL without pageviews; migration 1767700000000). */
  entry_hash: ColumnType<Buffer | null, never, never>;
  exit_hash: ColumnType<Buffer | null, never, never>;
  /** Its pageviews' engagement sums, as hit_rollups keeps them (migration 1767800000000). */
  timed_pageviews: Count;
  time_on_page_seconds: Decimal;
  scroll_0_24: Count;
  scroll_25_49: Count;
  scroll_50_74: Count;
  scroll_75_100: Count;
  /** Its visitor's first session, as the visitors table holds it (migration 1767800000000). */
  visitor_first_at: Date | null;
  /** Generated: 1 when visitor_first_at is before its start, its visitor's repeat visit (migration 1768300000000). */
  is_repeat: ColumnType<number | null, never, never>;
}

/** A derived session under one of its pages: its sessions row but for its generated is_repeat. */
export interface SessionPagesTable extends Omit<SessionsTable, 'is_repeat'> {
  /** The path as hits.step_key keeps it (cut to 255 characters). */
  page_key: string;
  /**
   * The start of the visitor's session before this one that has a row under the same page_key
   * (NULL for its first): migration 1769100000000, priorVisitsUpdate.
   */
  prior_visit_at: Date | null;
}

export interface VisitorsTable {
  site_id: number;
  visitor_id: string;
  first_session_at: Date;
}

export interface OrdersTable {
  site_id: number;
  order_id: string;
  hit_id: string;
  ts: Date;
  session_id: string;
  visitor_id: string;
  revenue: Decimal;
  currency: string;
}

export interface OrderItemsTable {
  site_id: number;
  order_id: string;
  line_no: number;
  sku: string;
  name: string | null;
  quantity: Count;
  price: Decimal;
}

export interface GoalsTable {
  id: number;
  site_id: number;
  name: string;
  type: 'event' | 'path';
  match_value: string;
  created_at: Date;
}

export interface RegisteredEventsTable {
  id: number;
  site_id: number;
  name: string;
  description: string | null;
  registered_at: Date;
}

export interface DirtySessionsTable {
  site_id: number;
  session_id: string;
  marked_at: Date;
}

export interface SiteDataVersionsTable {
  site_id: number;
  version: number | string;
  changed_at: Date;
}

/** The hits of the last hour, for realtime's 5-minute window (migration 1767400000000). */
export interface LiveHitsTable {
  site_id: number;
  ts: Date;
  hit_id: string;
  type: 'pageview' | 'event' | 'purchase';
  visitor_id: string;
  path_hash: Buffer | null;
  path: string | null;
}

export interface SessionRollupsTable {
  site_id: number;
  dimension: 'channel' | 'source' | 'country' | 'device' | 'browser';
  bucket: Date;
  value: string;
  sessions: number;
  bounces: number;
  session_pageviews: number | string;
  duration_seconds: string;
}

/** The key columns of a rollup by combination of the five session attributes (its MD5 and values). */
interface AttributeCombinationColumns {
  site_id: number;
  bucket: Date;
  attributes_hash: Buffer;
  channel: string;
  source: string;
  country: string;
  device: string;
  browser: string;
}

/**
 * Sessions that converted a goal (goal_id 0: any goal) per bucket and combination of the five
 * session attributes (migration 1767600000000).
 */
export interface GoalAttributeRollupsTable extends AttributeCombinationColumns {
  goal_id: number;
  sessions: number;
}

/** Every combination of the five attributes a site's sessions have had (migration 1767700000000). */
export type AttributeCombinationsTable = Omit<AttributeCombinationColumns, 'bucket'>;

/** Per bucket and combination of the five session attributes (migration 1764700000000). */
export interface SessionAttributeRollupsTable extends AttributeCombinationColumns {
  sessions: number;
  bounces: number;
  session_pageviews: number | string;
  duration_seconds: string;
  /** The sessions' engagement sums (SESSION_ENGAGEMENT_COLUMNS, migration 1768000000000). */
  timed_pageviews: number | string;
  time_on_page_seconds: string;
  scroll_0_24: number | string;
  scroll_25_49: number | string;
  scroll_50_74: number | string;
  scroll_75_100: number | string;
}

export interface HitRollupsTable {
  site_id: number;
  bucket: Date;
  pageviews: number;
  timed_pageviews: number;
  time_on_page_seconds: string;
  scroll_0_24: number;
  scroll_25_49: number;
  scroll_50_74: number;
  scroll_75_100: number;
}

export interface SessionPathRollupsTable {
  site_id: number;
  dimension: 'entry_path' | 'exit_path';
  bucket: Date;
  path_hash: Buffer;
  path: string;
  sessions: number;
}

/**
 * Sessions of a site day by one attribute's value and another attribute's value or the entry
 * or exit page (migration 1766700000000; libs/stats/src/rollups/session-rollup.ts, pairRollupDeltas).
 */
export interface SessionPairDayRollupsTable {
  site_id: number;
  attribute: 'channel' | 'source' | 'country' | 'device' | 'browser';
  dimension: 'channel' | 'source' | 'country' | 'device' | 'entry_path' | 'exit_path';
  value: string;
  bucket: Date;
  item_hash: Buffer;
  item: string;
  sessions: number;
}

/** Sessions by entry or exit page, combination of attributes and site day (migration 1768200000000). */
export interface SessionCombinationPathDayRollupsTable {
  site_id: number;
  dimension: 'entry_path' | 'exit_path';
  attributes_hash: Buffer;
  bucket: Date;
  path_hash: Buffer;
  sessions: number;
}

/** HyperLogLog sketches of visitor ids by UTC hour and day of the session start (migration 1765200000000). */
export interface VisitorSketchesTable {
  site_id: number;
  grain: 'hour' | 'day';
  bucket: Date;
  /** The registers, deflated (libs/stats/src/rollups/visitor-sketch.ts). */
  registers: Buffer;
}

/** A visitor sketch of the sessions of one attribute value (migration 1766100000000). */
export interface VisitorValueSketchesTable extends VisitorSketchesTable {
  dimension: 'channel' | 'source' | 'country' | 'device' | 'browser';
  value: string;
}

/**
 * A visitor sketch of the sessions of one combination of the five attributes that start in one
 * UTC day (migration 1767900000000).
 */
export interface VisitorCombinationSketchesTable {
  site_id: number;
  /** The UTC day. */
  bucket: Date;
  /** The sessions' attributes_hash. */
  attributes_hash: Buffer;
  registers: Buffer;
}

/** Hours whose sketch `aggregate` must rebuild from the sessions table. */
export interface DirtySketchHoursTable {
  site_id: number;
  bucket: Date;
}

/** Sessions added to an hour since its visitor sketch was built (migration 1767100000000). */
export interface DirtySketchSessionsTable {
  site_id: number;
  bucket: Date;
  session_id: string;
}

/** New visitors by 15-minute UTC bucket of their first session (migration 1765300000000). */
export interface VisitorFirstRollupsTable {
  site_id: number;
  bucket: Date;
  visitors: number;
}

/** Goals each derived session converted (migration 1765500000000). */
export interface SessionGoalsTable {
  site_id: number;
  session_id: string;
  goal_id: number;
  /** The session's start (sessions.started_at), written with the goals. */
  started_at: Date;
}

/** Sessions that converted a goal, by 15-minute bucket of the session start. */
export interface GoalRollupsTable {
  site_id: number;
  goal_id: number;
  bucket: Date;
  sessions: number;
}

/** Sessions that converted any goal, by bucket and session attribute (as session_rollups). */
export interface ConvertedRollupsTable {
  site_id: number;
  dimension: 'channel' | 'source' | 'country' | 'device' | 'browser';
  bucket: Date;
  value: string;
  sessions: number;
}

/** The goals the conversion rollups of a site were built for. */
export interface RolledUpGoalsTable {
  site_id: number;
  goal_id: number;
}

/** Event hits per session, name and 15-minute bucket, as aggregate last saw them (migration 1765600000000). */
export interface SessionEventBucketsTable {
  site_id: number;
  session_id: string;
  name: string;
  bucket: Date;
  hits: number;
}

/** Per event name and bucket: its hits, and the sessions with hits of it in the bucket. */
export interface EventRollupsTable {
  site_id: number;
  bucket: Date;
  name: string;
  occurrences: number;
  sessions: number;
}

/** Per event name: sessions whose consecutive buckets with hits of it are (from_bucket, to_bucket). */
export interface EventLinksTable {
  site_id: number;
  to_bucket: Date;
  name: string;
  from_bucket: Date;
  sessions: number;
}

/** A derived session's pageviews by 15-minute bucket, as aggregate last saw them (migration 1765700000000). */
export interface SessionPageviewBucketsTable {
  site_id: number;
  session_id: string;
  bucket: Date;
  pageviews: number;
}

/** Pageviews by session attribute, value and 15-minute bucket of their own ts. */
export interface PageviewRollupsTable {
  site_id: number;
  dimension: 'channel' | 'source' | 'country' | 'device' | 'browser';
  bucket: Date;
  value: string;
  pageviews: number;
}

/** Orders by 15-minute bucket of their ts (migration 1765800000000). */
export interface OrderRollupsTable {
  site_id: number;
  bucket: Date;
  orders: number;
  revenue: Decimal;
  items: Count;
}

/** Items by bucket (15 minutes, or UTC day) and sku (migration 1765800000000). */
export interface ItemRollupsTable {
  site_id: number;
  bucket: Date;
  sku: string;
  quantity: Count;
  revenue: Decimal;
  orders: number;
}

/** Purchasing sessions by 15-minute bucket of their start (migration 1765900000000). */
export interface PurchaseRollupsTable {
  site_id: number;
  bucket: Date;
  sessions: number;
}

/** A derived session's orders and revenue by bucket of their ts (migration 1766000000000). */
export interface SessionOrderBucketsTable {
  site_id: number;
  session_id: string;
  bucket: Date;
  orders: number;
  revenue: Decimal;
}

/** Orders and revenue by session attribute and bucket of their ts (migration 1766000000000). */
export interface RevenueRollupsTable {
  site_id: number;
  dimension: 'channel' | 'source' | 'country' | 'device' | 'browser';
  bucket: Date;
  value: string;
  orders: number;
  revenue: Decimal;
}

export interface StatsDatabase {
  session_order_buckets: SessionOrderBucketsTable;
  revenue_rollups: RevenueRollupsTable;
  /** revenue_rollups by the site's local day (migration 1766400000000). */
  revenue_day_rollups: RevenueRollupsTable;
  purchase_rollups: PurchaseRollupsTable;
  order_rollups: OrderRollupsTable;
  item_rollups: ItemRollupsTable;
  item_day_rollups: ItemRollupsTable;
  session_pageview_buckets: SessionPageviewBucketsTable;
  pageview_rollups: PageviewRollupsTable;
  /** pageview_rollups by the site's local day (migration 1766400000000). */
  pageview_day_rollups: PageviewRollupsTable;
  session_event_buckets: SessionEventBucketsTable;
  event_rollups: EventRollupsTable;
  event_links: EventLinksTable;
  /** event_rollups by the site's local day, and the event_links between two days (migration 1766500000000). */
  event_day_rollups: EventRollupsTable;
  event_day_links: EventLinksTable;
  /** event_rollups and event_links once for each page key, over its sessions (migration 1769200000000). */
  page_event_rollups: EventRollupsTable & { page_key: string };
  page_event_links: EventLinksTable & { page_key: string };
  session_goals: SessionGoalsTable;
  goal_rollups: GoalRollupsTable;
  /** goal_rollups by the site's local day (migration 1767200000000). */
  goal_day_rollups: GoalRollupsTable;
  converted_rollups: ConvertedRollupsTable;
  goal_attribute_rollups: GoalAttributeRollupsTable;
  /** goal_attribute_rollups by the site's local day. */
  goal_attribute_day_rollups: GoalAttributeRollupsTable;
  /** converted_rollups by the site's local day (migration 1766400000000). */
  converted_day_rollups: ConvertedRollupsTable;
  rolled_up_goals: RolledUpGoalsTable;
  /** session_rollups and session_path_rollups by the site's local day (migrations 1765400000000, 1766400000000). */
  session_day_rollups: SessionRollupsTable;
  session_path_day_rollups: SessionPathRollupsTable;
  /** session_path_day_rollups by aligned blocks of `span` site days (migration 1766600000000). */
  session_path_span_rollups: SessionPathRollupsTable & { span: number };
  /** The sessions of session_day_rollups by aligned blocks of `span` site days (migration 1767300000000). */
  session_span_rollups: Pick<
    SessionRollupsTable,
    'site_id' | 'dimension' | 'bucket' | 'value' | 'sessions'
  > & {
    span: number;
  };
  visitor_first_rollups: VisitorFirstRollupsTable;
  visitor_sketches: VisitorSketchesTable;
  visitor_value_sketches: VisitorValueSketchesTable;
  visitor_combination_sketches: VisitorCombinationSketchesTable;
  dirty_sketch_hours: DirtySketchHoursTable;
  dirty_sketch_sessions: DirtySketchSessionsTable;
  session_path_rollups: SessionPathRollupsTable;
  hit_rollups: HitRollupsTable;
  live_hits: LiveHitsTable;
  session_rollups: SessionRollupsTable;
  session_attribute_rollups: SessionAttributeRollupsTable;
  /** session_attribute_rollups by the site's local day (migrations 1766300000000, 1766400000000). */
  session_attribute_day_rollups: SessionAttributeRollupsTable;
  session_pair_day_rollups: SessionPairDayRollupsTable;
  session_combination_path_day_rollups: SessionCombinationPathDayRollupsTable;
  attribute_combinations: AttributeCombinationsTable;
  site_data_versions: SiteDataVersionsTable;
  /** An upper bound of each site's session durations (migration 1768100000000). */
  site_session_bounds: { site_id: number; longest_seconds: string | number };
  hits: HitsTable;
  sessions: SessionsTable;
  /** Each derived session once per path it has a pageview of (migration 1768700000000). */
  session_pages: SessionPagesTable;
  visitors: VisitorsTable;
  orders: OrdersTable;
  order_items: OrderItemsTable;
  goals: GoalsTable;
  registered_events: RegisteredEventsTable;
  dirty_sessions: DirtySessionsTable;
}
