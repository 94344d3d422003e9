import { DataSource } from 'typeorm';
import { priorVisitsUpdate } from '@app/stats/sql/session-pages';
import { registerSqlFunctions } from '../sqlite/embedded-driver';
import { sqliteDialect } from '../sqlite/sqlite-dialect';
import { SQLITE_MIGRATIONS } from './index';

/**
 * One table of the final MariaDB schema (libs/db/src/migrations, through 1765400000000) in the
 * SQLite mapping. A column is "name TYPE", or "name TYPE NULL" when MariaDB allows NULL.
 */
interface ExpectedTable {
  columns: string[];
  primaryKey: string[];
  withoutRowid: boolean;
  indexes: Record<string, { unique: boolean; columns: string[] }>;
  foreignKeys: Array<{ from: string; table: string; to: string }>;
}

const index = (...columns: string[]) => ({ unique: false, columns });
const unique = (...columns: string[]) => ({ unique: true, columns });

const EXPECTED: Record<string, ExpectedTable> = {
  users: {
    columns: ['id INTEGER', 'email TEXT', 'created_at DATETIME'],
    primaryKey: ['id'],
    withoutRowid: false,
    indexes: { uq_users_email: unique('email') },
    foreignKeys: [],
  },
  sites: {
    columns: [
      'id INTEGER',
      'name TEXT',
      'domain TEXT',
      'timezone TEXT',
      'currency TEXT',
      'tracking_mode TEXT',
      'created_at DATETIME',
    ],
    primaryKey: ['id'],
    withoutRowid: false,
    indexes: {},
    foreignKeys: [],
  },
  memberships: {
    columns: ['site_id INTEGER', 'user_id INTEGER', 'created_at DATETIME'],
    primaryKey: ['site_id', 'user_id'],
    withoutRowid: true,
    indexes: { ix_memberships_user: index('user_id', 'site_id') },
    foreignKeys: [
      { from: 'site_id', table: 'sites', to: 'id' },
      { from: 'user_id', table: 'users', to: 'id' },
    ],
  },
  api_keys: {
    columns: [
      'id INTEGER',
      'user_id INTEGER',
      'name TEXT',
      'prefix TEXT',
      'key_hash TEXT',
      'created_at DATETIME',
      'expires_at DATETIME NULL',
      'revoked_at DATETIME NULL',
      'last_used_at DATETIME NULL',
    ],
    primaryKey: ['id'],
    withoutRowid: false,
    indexes: { uq_api_keys_hash: unique('key_hash'), ix_api_keys_user: index('user_id') },
    foreignKeys: [{ from: 'user_id', table: 'users', to: 'id' }],
  },
  registered_events: {
    columns: [
      'id INTEGER',
      'site_id INTEGER',
      'name TEXT',
      'description TEXT NULL',
      'registered_at DATETIME',
    ],
    primaryKey: ['id'],
    withoutRowid: false,
    indexes: { uq_registered_events_site_name: unique('site_id', 'name') },
    foreignKeys: [{ from: 'site_id', table: 'sites', to: 'id' }],
  },
  goals: {
    columns: [
      'id INTEGER',
      'site_id INTEGER',
      'name TEXT',
      'type TEXT',
      'match_value TEXT',
      'created_at DATETIME',
    ],
    primaryKey: ['id'],
    withoutRowid: false,
    indexes: { ix_goals_site: index('site_id', 'id') },
    foreignKeys: [{ from: 'site_id', table: 'sites', to: 'id' }],
  },
  hits: {
    columns: [
      'seq INTEGER',
      'site_id INTEGER',
      'hit_id TEXT',
      'type TEXT',
      'ts DATETIME',
      'session_id TEXT',
      'visitor_id TEXT',
      'path TEXT NULL',
      'channel TEXT NULL',
      'source TEXT NULL',
      'country TEXT NULL',
      'device TEXT NULL',
      'browser TEXT NULL',
      'time_on_page_seconds INTEGER NULL',
      'scroll_depth INTEGER NULL',
      'name TEXT NULL',
      'order_id TEXT NULL',
      'revenue INTEGER NULL',
      'currency TEXT NULL',
      'step_key TEXT NULL',
    ],
    primaryKey: ['seq'],
    withoutRowid: false,
    indexes: {
      uq_hits_site_hit: unique('site_id', 'hit_id'),
      ix_hits_site_type_ts: index('site_id', 'type', 'ts'),
      ix_hits_site_session: index(
        'site_id',
        'session_id',
        'ts',
        'seq',
        'type',
        'step_key',
        'time_on_page_seconds',
        'scroll_depth',
      ),
      ix_hits_site_visitor: index('site_id', 'visitor_id', 'ts', 'seq', 'type', 'step_key'),
      ix_hits_site_step: index('site_id', 'type', 'step_key', 'visitor_id', 'ts', 'seq', 'session_id'),
    },
    foreignKeys: [],
  },
  orders: {
    columns: [
      'site_id INTEGER',
      'order_id TEXT',
      'hit_id TEXT',
      'ts DATETIME',
      'session_id TEXT',
      'visitor_id TEXT',
      'revenue INTEGER',
      'currency TEXT',
    ],
    primaryKey: ['site_id', 'order_id'],
    withoutRowid: true,
    indexes: {
      ix_orders_site_ts: index('site_id', 'ts'),
      ix_orders_site_session: index('site_id', 'session_id'),
    },
    foreignKeys: [],
  },
  order_items: {
    columns: [
      'site_id INTEGER',
      'order_id TEXT',
      'line_no INTEGER',
      'sku TEXT',
      'name TEXT NULL',
      'quantity INTEGER',
      'price INTEGER',
    ],
    primaryKey: ['site_id', 'order_id', 'line_no'],
    withoutRowid: true,
    indexes: { ix_order_items_site_sku: index('site_id', 'sku') },
    foreignKeys: [],
  },
  sessions: {
    columns: [
      'site_id INTEGER',
      'session_id TEXT',
      'visitor_id TEXT',
      'started_at DATETIME',
      'ended_at DATETIME',
      'hits INTEGER',
      'pageviews INTEGER',
      'events INTEGER',
      'purchases INTEGER',
      'is_bounce INTEGER',
      'duration_seconds INTEGER',
      'entry_path TEXT NULL',
      'exit_path TEXT NULL',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'purchased INTEGER',
      // Generated from the five attributes (migration 1767700000000), as MariaDB's VIRTUAL column.
      'attributes_hash BLOB NULL',
      'entry_hash BLOB NULL',
      'exit_hash BLOB NULL',
      // Kept by `aggregate` (migration 1767800000000).
      'timed_pageviews INTEGER',
      'time_on_page_seconds INTEGER',
      'scroll_0_24 INTEGER',
      'scroll_25_49 INTEGER',
      'scroll_50_74 INTEGER',
      'scroll_75_100 INTEGER',
      'visitor_first_at DATETIME NULL',
      // Generated from visitor_first_at and started_at (migration 1768300000000).
      'is_repeat INTEGER NULL',
    ],
    primaryKey: ['site_id', 'session_id'],
    withoutRowid: true,
    indexes: {
      ix_sessions_site_start: index('site_id', 'started_at'),
      ix_sessions_site_visitor: index('site_id', 'visitor_id', 'started_at'),
      ix_sessions_site_end: index('site_id', 'ended_at', 'started_at'),
      ix_sessions_site_combination: index(
        'site_id',
        'attributes_hash',
        'started_at',
        'visitor_id',
        'ended_at',
        'pageviews',
        'entry_hash',
        'exit_hash',
        'visitor_first_at',
        'timed_pageviews',
        'time_on_page_seconds',
        'scroll_0_24',
        'scroll_25_49',
        'scroll_50_74',
        'scroll_75_100',
      ),
      ix_sessions_site_repeat: index(
        'is_repeat',
        'site_id',
        'attributes_hash',
        'started_at',
        'visitor_first_at',
        'visitor_id',
      ),
    },
    foreignKeys: [],
  },
  visitors: {
    columns: ['site_id INTEGER', 'visitor_id TEXT', 'first_session_at DATETIME'],
    primaryKey: ['site_id', 'visitor_id'],
    withoutRowid: true,
    indexes: { ix_visitors_site_first_session: index('site_id', 'first_session_at') },
    foreignKeys: [],
  },
  dirty_sessions: {
    columns: ['site_id INTEGER', 'session_id TEXT', 'marked_at DATETIME'],
    primaryKey: ['site_id', 'session_id'],
    withoutRowid: true,
    indexes: { ix_dirty_sessions_marked: index('marked_at') },
    foreignKeys: [],
  },
  live_hits: {
    columns: [
      'site_id INTEGER',
      'ts DATETIME',
      'hit_id TEXT',
      'type TEXT',
      'visitor_id TEXT',
      'path_hash BLOB NULL',
      'path TEXT NULL',
    ],
    primaryKey: ['site_id', 'ts', 'hit_id'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  site_data_versions: {
    columns: ['site_id INTEGER', 'version INTEGER', 'changed_at DATETIME'],
    primaryKey: ['site_id'],
    withoutRowid: false,
    indexes: {},
    foreignKeys: [],
  },
  session_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'value TEXT',
      'sessions INTEGER',
      'bounces INTEGER',
      'session_pageviews INTEGER',
      'duration_seconds INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  hit_rollups: {
    columns: [
      'site_id INTEGER',
      'bucket DATETIME',
      'pageviews INTEGER',
      'timed_pageviews INTEGER',
      'time_on_page_seconds INTEGER',
      'scroll_0_24 INTEGER',
      'scroll_25_49 INTEGER',
      'scroll_50_74 INTEGER',
      'scroll_75_100 INTEGER',
    ],
    primaryKey: ['site_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_path_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'path_hash BLOB',
      'path TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'path_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_attribute_rollups: {
    columns: [
      'site_id INTEGER',
      'bucket DATETIME',
      'attributes_hash BLOB',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'sessions INTEGER',
      'bounces INTEGER',
      'session_pageviews INTEGER',
      'duration_seconds INTEGER',
      'timed_pageviews INTEGER',
      'time_on_page_seconds INTEGER',
      'scroll_0_24 INTEGER',
      'scroll_25_49 INTEGER',
      'scroll_50_74 INTEGER',
      'scroll_75_100 INTEGER',
    ],
    primaryKey: ['site_id', 'bucket', 'attributes_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_attribute_day_rollups: {
    columns: [
      'site_id INTEGER',
      'bucket DATETIME',
      'attributes_hash BLOB',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'sessions INTEGER',
      'bounces INTEGER',
      'session_pageviews INTEGER',
      'duration_seconds INTEGER',
      'timed_pageviews INTEGER',
      'time_on_page_seconds INTEGER',
      'scroll_0_24 INTEGER',
      'scroll_25_49 INTEGER',
      'scroll_50_74 INTEGER',
      'scroll_75_100 INTEGER',
    ],
    primaryKey: ['site_id', 'attributes_hash', 'bucket'],
    withoutRowid: true,
    indexes: {
      ix_session_attribute_days_bucket: index('site_id', 'bucket'),
    },
    foreignKeys: [],
  },
  visitor_sketches: {
    columns: ['site_id INTEGER', 'grain TEXT', 'bucket DATETIME', 'registers BLOB'],
    primaryKey: ['site_id', 'grain', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  visitor_value_sketches: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'grain TEXT',
      'bucket DATETIME',
      'value TEXT',
      'registers BLOB',
    ],
    primaryKey: ['site_id', 'dimension', 'grain', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  visitor_combination_sketches: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'attributes_hash BLOB', 'registers BLOB'],
    primaryKey: ['site_id', 'attributes_hash', 'bucket'],
    withoutRowid: true,
    indexes: {
      ix_visitor_combination_sketches_bucket: index('site_id', 'bucket'),
    },
    foreignKeys: [],
  },
  session_pages: {
    columns: [
      'site_id INTEGER',
      'page_key TEXT',
      'started_at DATETIME',
      'session_id TEXT',
      'visitor_id TEXT',
      'ended_at DATETIME',
      'hits INTEGER',
      'pageviews INTEGER',
      'events INTEGER',
      'purchases INTEGER',
      'is_bounce INTEGER',
      'duration_seconds INTEGER',
      'entry_path TEXT NULL',
      'exit_path TEXT NULL',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'purchased INTEGER',
      'timed_pageviews INTEGER',
      'time_on_page_seconds INTEGER',
      'scroll_0_24 INTEGER',
      'scroll_25_49 INTEGER',
      'scroll_50_74 INTEGER',
      'scroll_75_100 INTEGER',
      // Generated from the entry and exit page, as in sessions.
      'entry_hash BLOB NULL',
      'exit_hash BLOB NULL',
      'prior_page_key TEXT NULL',
      // Generated from the five attributes, as in sessions (migration 1768900000000).
      'attributes_hash BLOB NULL',
      // Its visitor's first session, as sessions copies it (migration 1769000000000).
      'visitor_first_at DATETIME NULL',
      // The start of its visitor's session before it under the same page (migration 1769100000000).
      'prior_visit_at DATETIME NULL',
    ],
    primaryKey: ['site_id', 'page_key', 'started_at', 'session_id'],
    withoutRowid: true,
    indexes: {
      ix_session_pages_session: index('site_id', 'session_id'),
      ix_session_pages_visitor: index(
        'site_id',
        'visitor_id',
        'page_key',
        'started_at',
        'session_id',
        'prior_visit_at',
      ),
    },
    foreignKeys: [],
  },
  site_session_bounds: {
    columns: ['site_id INTEGER', 'longest_seconds INTEGER'],
    primaryKey: ['site_id'],
    withoutRowid: false,
    indexes: {},
    foreignKeys: [],
  },
  dirty_sketch_hours: {
    columns: ['site_id INTEGER', 'bucket DATETIME'],
    primaryKey: ['site_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  dirty_sketch_sessions: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'session_id TEXT'],
    primaryKey: ['site_id', 'bucket', 'session_id'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_day_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'value TEXT',
      'sessions INTEGER',
      'bounces INTEGER',
      'session_pageviews INTEGER',
      'duration_seconds INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {
      ix_session_days_top: index('site_id', 'dimension', 'bucket', 'sessions'),
    },
    foreignKeys: [],
  },
  session_pair_day_rollups: {
    columns: [
      'site_id INTEGER',
      'attribute TEXT',
      'dimension TEXT',
      'value TEXT',
      'bucket DATETIME',
      'item_hash BLOB',
      'item TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'attribute', 'dimension', 'value', 'bucket', 'item_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_combination_path_day_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'attributes_hash BLOB',
      'bucket DATETIME',
      'path_hash BLOB',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'attributes_hash', 'bucket', 'path_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_path_span_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'span INTEGER',
      'bucket DATETIME',
      'path_hash BLOB',
      'path TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'span', 'bucket', 'path_hash'],
    withoutRowid: true,
    indexes: {
      ix_session_path_spans_top: index('site_id', 'dimension', 'span', 'bucket', 'sessions'),
    },
    foreignKeys: [],
  },
  session_span_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'span INTEGER',
      'bucket DATETIME',
      'value TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'span', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {
      ix_session_spans_top: index('site_id', 'dimension', 'span', 'bucket', 'sessions'),
    },
    foreignKeys: [],
  },
  session_path_day_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'path_hash BLOB',
      'path TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'path_hash'],
    withoutRowid: true,
    indexes: {
      ix_session_path_days_top: index('site_id', 'dimension', 'bucket', 'sessions'),
    },
    foreignKeys: [],
  },
  visitor_first_rollups: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'visitors INTEGER'],
    primaryKey: ['site_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_goals: {
    columns: ['site_id INTEGER', 'session_id TEXT', 'goal_id INTEGER', 'started_at DATETIME'],
    primaryKey: ['site_id', 'session_id', 'goal_id'],
    withoutRowid: true,
    indexes: { ix_session_goals_site_start: index('site_id', 'started_at') },
    foreignKeys: [],
  },
  attribute_combinations: {
    columns: [
      'site_id INTEGER',
      'attributes_hash BLOB',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
    ],
    primaryKey: ['site_id', 'attributes_hash'],
    withoutRowid: true,
    indexes: {
      ix_attribute_combinations_country: index('site_id', 'country', 'channel', 'device'),
      ix_attribute_combinations_source: index('site_id', 'source', 'channel', 'device'),
      ix_attribute_combinations_channel: index('site_id', 'channel', 'device', 'browser'),
    },
    foreignKeys: [],
  },
  goal_attribute_rollups: {
    columns: [
      'site_id INTEGER',
      'goal_id INTEGER',
      'bucket DATETIME',
      'attributes_hash BLOB',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'goal_id', 'bucket', 'attributes_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  goal_attribute_day_rollups: {
    columns: [
      'site_id INTEGER',
      'goal_id INTEGER',
      'bucket DATETIME',
      'attributes_hash BLOB',
      'channel TEXT',
      'source TEXT',
      'country TEXT',
      'device TEXT',
      'browser TEXT',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'goal_id', 'bucket', 'attributes_hash'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  goal_rollups: {
    columns: ['site_id INTEGER', 'goal_id INTEGER', 'bucket DATETIME', 'sessions INTEGER'],
    primaryKey: ['site_id', 'goal_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  goal_day_rollups: {
    columns: ['site_id INTEGER', 'goal_id INTEGER', 'bucket DATETIME', 'sessions INTEGER'],
    primaryKey: ['site_id', 'goal_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  converted_rollups: {
    columns: ['site_id INTEGER', 'dimension TEXT', 'bucket DATETIME', 'value TEXT', 'sessions INTEGER'],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  converted_day_rollups: {
    columns: ['site_id INTEGER', 'dimension TEXT', 'bucket DATETIME', 'value TEXT', 'sessions INTEGER'],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  rolled_up_goals: {
    columns: ['site_id INTEGER', 'goal_id INTEGER'],
    primaryKey: ['site_id', 'goal_id'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_event_buckets: {
    columns: ['site_id INTEGER', 'session_id TEXT', 'name TEXT', 'bucket DATETIME', 'hits INTEGER'],
    primaryKey: ['site_id', 'session_id', 'name', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  event_rollups: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'name TEXT', 'occurrences INTEGER', 'sessions INTEGER'],
    primaryKey: ['site_id', 'bucket', 'name'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  event_day_rollups: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'name TEXT', 'occurrences INTEGER', 'sessions INTEGER'],
    primaryKey: ['site_id', 'bucket', 'name'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  event_day_links: {
    columns: [
      'site_id INTEGER',
      'to_bucket DATETIME',
      'name TEXT',
      'from_bucket DATETIME',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'to_bucket', 'name', 'from_bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_pageview_buckets: {
    columns: ['site_id INTEGER', 'session_id TEXT', 'bucket DATETIME', 'pageviews INTEGER'],
    primaryKey: ['site_id', 'session_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  pageview_rollups: {
    columns: ['site_id INTEGER', 'dimension TEXT', 'bucket DATETIME', 'value TEXT', 'pageviews INTEGER'],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  pageview_day_rollups: {
    columns: ['site_id INTEGER', 'dimension TEXT', 'bucket DATETIME', 'value TEXT', 'pageviews INTEGER'],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  session_order_buckets: {
    columns: ['site_id INTEGER', 'session_id TEXT', 'bucket DATETIME', 'orders INTEGER', 'revenue INTEGER'],
    primaryKey: ['site_id', 'session_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  revenue_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'value TEXT',
      'orders INTEGER',
      'revenue INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  revenue_day_rollups: {
    columns: [
      'site_id INTEGER',
      'dimension TEXT',
      'bucket DATETIME',
      'value TEXT',
      'orders INTEGER',
      'revenue INTEGER',
    ],
    primaryKey: ['site_id', 'dimension', 'bucket', 'value'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  purchase_rollups: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'sessions INTEGER'],
    primaryKey: ['site_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  order_rollups: {
    columns: ['site_id INTEGER', 'bucket DATETIME', 'orders INTEGER', 'revenue INTEGER', 'items INTEGER'],
    primaryKey: ['site_id', 'bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  item_rollups: {
    columns: [
      'site_id INTEGER',
      'bucket DATETIME',
      'sku TEXT',
      'quantity INTEGER',
      'revenue INTEGER',
      'orders INTEGER',
    ],
    primaryKey: ['site_id', 'bucket', 'sku'],
    withoutRowid: true,
    indexes: { ix_item_rollups_sku: index('site_id', 'sku', 'bucket') },
    foreignKeys: [],
  },
  item_day_rollups: {
    columns: [
      'site_id INTEGER',
      'bucket DATETIME',
      'sku TEXT',
      'quantity INTEGER',
      'revenue INTEGER',
      'orders INTEGER',
    ],
    primaryKey: ['site_id', 'bucket', 'sku'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  event_links: {
    columns: [
      'site_id INTEGER',
      'to_bucket DATETIME',
      'name TEXT',
      'from_bucket DATETIME',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'to_bucket', 'name', 'from_bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  page_event_rollups: {
    columns: [
      'site_id INTEGER',
      'page_key TEXT',
      'bucket DATETIME',
      'name TEXT',
      'occurrences INTEGER',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'page_key', 'bucket', 'name'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
  page_event_links: {
    columns: [
      'site_id INTEGER',
      'page_key TEXT',
      'to_bucket DATETIME',
      'name TEXT',
      'from_bucket DATETIME',
      'sessions INTEGER',
    ],
    primaryKey: ['site_id', 'page_key', 'to_bucket', 'name', 'from_bucket'],
    withoutRowid: true,
    indexes: {},
    foreignKeys: [],
  },
};

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
  hidden: number;
}

describe('SqliteSchema1765100000000', () => {
  let ds: DataSource;
  const rows = <T>(sql: string, parameters: unknown[] = []) => ds.query<T[]>(sql, parameters);
  const userTables = async () =>
    (
      await rows<{ name: string }>(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'migrations' ORDER BY name",
      )
    ).map((t) => t.name);
  const insertHit = (hitId: string, type: string, values: { path?: string; name?: string } = {}) =>
    rows(
      `INSERT INTO hits (site_id, hit_id, type, ts, session_id, visitor_id, path, name)
       VALUES (1, ?, ?, '2025-01-01 00:00:00.000', 's1', 'v1', ?, ?)`,
      [hitId, type, values.path ?? null, values.name ?? null],
    );

  beforeEach(async () => {
    ds = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      // The SQL functions every SQLite connection has (md5_bytes, the goal attribute rollups' fill).
      prepareDatabase: registerSqlFunctions,
      migrations: SQLITE_MIGRATIONS,
      migrationsTableName: 'migrations',
    });
    await ds.initialize();
    await ds.runMigrations();
  });

  afterEach(async () => {
    await ds.destroy();
  });

  it('creates every table of the MariaDB schema and no other', async () => {
    expect(await userTables()).toEqual(Object.keys(EXPECTED).sort());
  });

  it('queues every hour that already has sessions for the visitor sketches (a file made before them)', async () => {
    // Back to the schema before the visitor sketches (and every later migration).
    while (
      (await rows("SELECT 1 FROM migrations WHERE name = 'SqliteVisitorSketches1765200000000'")).length > 0
    ) {
      await ds.undoLastMigration();
    }
    for (const [id, at] of [
      ['s1', '2026-03-01 10:05:00.000'],
      ['s2', '2026-03-01 10:55:00.000'],
      ['s3', '2026-03-01 11:00:00.000'],
    ]) {
      await rows(
        `INSERT INTO sessions (site_id, session_id, visitor_id, started_at, ended_at, hits, pageviews, events, purchases, is_bounce, duration_seconds, channel, source, country, device, browser)
         VALUES (1, ?, 'v', ?, ?, 1, 1, 0, 0, 1, 0, 'Direct', '(direct)', 'DE', 'desktop', 'Firefox')`,
        [id, at, at],
      );
    }
    await rows(
      "INSERT INTO visitors (site_id, visitor_id, first_session_at) VALUES (1, 'a', '2026-03-01 10:05:00.000'), (1, 'b', '2026-03-01 10:14:59.999'), (1, 'c', '2026-03-01 10:15:00.000')",
    );
    await ds.runMigrations();
    // And counts the visitors by the quarter hour of their first session.
    expect(await rows('SELECT site_id, bucket, visitors FROM visitor_first_rollups ORDER BY bucket')).toEqual(
      [
        { site_id: 1, bucket: '2026-03-01 10:00:00.000', visitors: 2 },
        { site_id: 1, bucket: '2026-03-01 10:15:00.000', visitors: 1 },
      ],
    );
    expect(await rows('SELECT site_id, bucket FROM dirty_sketch_hours ORDER BY bucket')).toEqual([
      { site_id: 1, bucket: '2026-03-01 10:00:00.000' },
      { site_id: 1, bucket: '2026-03-01 11:00:00.000' },
    ]);
  });

  it('gives each table the MariaDB columns in their order, with their nullability', async () => {
    for (const [table, expected] of Object.entries(EXPECTED)) {
      const columns = await rows<ColumnInfo>('SELECT * FROM pragma_table_xinfo(?) ORDER BY cid', [table]);
      const actual = columns.map((c) => `${c.name} ${c.type}${c.notnull ? '' : ' NULL'}`);
      expect({ table, columns: actual }).toEqual({ table, columns: expected.columns });
    }
  });

  it('keys each table by the MariaDB primary key, WITHOUT ROWID unless that key is one integer column', async () => {
    const rowidness = await rows<{ name: string; wr: number }>(
      "SELECT name, wr FROM pragma_table_list WHERE schema = 'main'",
    );
    for (const [table, expected] of Object.entries(EXPECTED)) {
      const columns = await rows<ColumnInfo>('SELECT * FROM pragma_table_xinfo(?) WHERE pk > 0 ORDER BY pk', [
        table,
      ]);
      const wr = rowidness.find((t) => t.name === table)?.wr;
      expect({ table, primaryKey: columns.map((c) => c.name), withoutRowid: wr === 1 }).toEqual({
        table,
        primaryKey: expected.primaryKey,
        withoutRowid: expected.withoutRowid,
      });
    }
  });

  it('creates every MariaDB index under its MariaDB name, on its table, with its columns in order', async () => {
    for (const [table, expected] of Object.entries(EXPECTED)) {
      // origin 'pk' is the primary key of a WITHOUT ROWID table, not a secondary index.
      const list = await rows<{ name: string; unique: number }>(
        'SELECT name, "unique" FROM pragma_index_list(?) WHERE origin <> \'pk\' ORDER BY name',
        [table],
      );
      const indexes: ExpectedTable['indexes'] = {};
      for (const { name, unique: isUnique } of list) {
        const columns = await rows<{ name: string }>('SELECT name FROM pragma_index_info(?) ORDER BY seqno', [
          name,
        ]);
        indexes[name] = { unique: isUnique === 1, columns: columns.map((c) => c.name) };
      }
      expect({ table, indexes }).toEqual({ table, indexes: expected.indexes });
    }
  });

  it('declares the MariaDB foreign keys with ON DELETE CASCADE', async () => {
    for (const [table, expected] of Object.entries(EXPECTED)) {
      const keys = await rows<{ from: string; table: string; to: string; on_delete: string }>(
        'SELECT "from", "table", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY "from"',
        [table],
      );
      expect({ table, keys }).toEqual({
        table,
        keys: expected.foreignKeys.map((k) => ({ ...k, on_delete: 'CASCADE' })),
      });
    }
  });

  it("deletes a site's memberships, goals and registered events with the site", async () => {
    const now = '2025-01-01 00:00:00.000';
    await rows("INSERT INTO users (email, created_at) VALUES ('a@example.com', ?)", [now]);
    await rows(
      "INSERT INTO sites (name, domain, timezone, currency, tracking_mode, created_at) VALUES ('s', 'example.com', 'UTC', 'EUR', 'full', ?)",
      [now],
    );
    await rows('INSERT INTO memberships (site_id, user_id, created_at) VALUES (1, 1, ?)', [now]);
    await rows(
      "INSERT INTO goals (site_id, name, type, match_value, created_at) VALUES (1, 'g', 'path', '/', ?)",
      [now],
    );
    await rows("INSERT INTO registered_events (site_id, name, registered_at) VALUES (1, 'e', ?)", [now]);

    await rows('DELETE FROM sites WHERE id = 1');

    expect(
      await rows(
        'SELECT (SELECT COUNT(*) FROM memberships) AS m, (SELECT COUNT(*) FROM goals) AS g, (SELECT COUNT(*) FROM registered_events) AS e',
      ),
    ).toEqual([{ m: 0, g: 0, e: 0 }]);
  });

  it("computes step_key as the event's name and the pageview's first 255 characters of path", async () => {
    // Two-byte characters: the cut counts characters, as MariaDB's LEFT does, not bytes.
    const path = '/' + 'ä'.repeat(299);
    await insertHit('e1', 'event', { name: 'signup', path: '/ignored' });
    await insertHit('p1', 'pageview', { path });
    await insertHit('o1', 'purchase', { name: 'ignored', path: '/checkout' });

    expect(await rows('SELECT hit_id, step_key FROM hits ORDER BY seq')).toEqual([
      { hit_id: 'e1', step_key: 'signup' },
      { hit_id: 'p1', step_key: path.slice(0, 255) },
      { hit_id: 'o1', step_key: null },
    ]);
    const [stepKey] = await rows<ColumnInfo>(
      "SELECT * FROM pragma_table_xinfo('hits') WHERE name = 'step_key'",
    );
    expect(stepKey.hidden).toBe(2); // a VIRTUAL generated column: computed on read, not stored
  });

  it('rejects an ENUM column value outside its list', async () => {
    await expect(insertHit('x1', 'click')).rejects.toThrow(/CHECK constraint failed/);
    await expect(insertHit('x2', 'Pageview')).rejects.toThrow(/CHECK constraint failed/);
  });

  it('never hands out a deleted hit seq again', async () => {
    await insertHit('h1', 'pageview', { path: '/' });
    await insertHit('h2', 'pageview', { path: '/' });
    await rows("DELETE FROM hits WHERE hit_id = 'h2'");
    await insertHit('h3', 'pageview', { path: '/' });

    expect(await rows('SELECT hit_id, seq FROM hits ORDER BY seq')).toEqual([
      { hit_id: 'h1', seq: 1 },
      { hit_id: 'h3', seq: 3 },
    ]);
  });

  it('refuses a second user whose email differs only in letter case', async () => {
    await rows("INSERT INTO users (email, created_at) VALUES ('Ann@Example.com', '2025-01-01 00:00:00.000')");
    await expect(
      rows("INSERT INTO users (email, created_at) VALUES ('ann@example.com', '2025-01-01 00:00:00.000')"),
    ).rejects.toThrow(/UNIQUE constraint failed: users.email/);
  });

  it('compares ids exactly, trailing spaces included', async () => {
    await insertHit('e1', 'pageview', { path: '/' });
    await insertHit('e1 ', 'pageview', { path: '/' });
    await expect(insertHit('e1', 'pageview', { path: '/' })).rejects.toThrow(/UNIQUE constraint failed/);
  });

  it("sets a chunk's prior visits from its visitors' rows, read from the index by visitor alone", async () => {
    const update = priorVisitsUpdate(sqliteDialect, new Map([[1, ['v1', 'v2']]]));
    const plan = (
      await rows<{ detail: string }>(`EXPLAIN QUERY PLAN ${update.sql}`, [...update.parameters])
    ).map((r) => r.detail);
    // A search of the index by visitor that reads no row of the table (the sessions were once
    // found by visitor, then each row by session: every site's row when joined the other way).
    expect(plan.filter((d) => /^(SCAN|SEARCH) (sp|s)\b/.test(d)).map((d) => d.replace(/ \(.*$/, ''))).toEqual(
      ['SEARCH sp USING COVERING INDEX ix_session_pages_visitor'],
    );
  });

  it('drops every table and index on down', async () => {
    for (let i = 1; i < SQLITE_MIGRATIONS.length; i++) await ds.undoLastMigration();
    await ds.undoLastMigration();

    expect(await userTables()).toEqual([]);
    expect(
      await rows(
        "SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
      ),
    ).toEqual([]);
    expect(await rows('SELECT name FROM migrations')).toEqual([]);
  });
});
