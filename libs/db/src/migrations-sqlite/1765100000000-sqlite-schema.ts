import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The embedded SQLite engine starts from an empty file, so it needs no history: this one
 * migration is the whole MariaDB schema as of migration 1765000000000 (libs/db/src/migrations),
 * with the same tables, columns in the same order, keys and index names (queries name indexes),
 * so that one set of queries reads both. It creates empty tables: the MariaDB migrations'
 * backfills of the rollups have nothing to read here. A change to the MariaDB schema needs a
 * matching SQLite migration after this one.
 *
 * Type mapping:
 * - every integer width and TINYINT(1) → INTEGER; AUTO_INCREMENT ids → INTEGER PRIMARY KEY
 *   AUTOINCREMENT (hit order only grows); other primary keys → WITHOUT ROWID (clustered).
 * - VARCHAR/CHAR → TEXT: the default BINARY collation compares bytes without padding like
 *   utf8mb4_nopad_bin; users.email (utf8mb4_unicode_ci) → TEXT COLLATE NOCASE.
 * - ENUM → TEXT with a CHECK on its values; BINARY(16) → BLOB.
 * - DATETIME(3) and DATETIME → DATETIME, holding UTC text 'YYYY-MM-DD HH:MM:SS.SSS' (TypeORM's
 *   sqlite format, ordered as text). The declared type is what tells the driver to read the
 *   value back as a Date (embedded-driver.ts), as mysql2 does; its NUMERIC affinity leaves
 *   such text as text.
 * - DECIMAL → INTEGER in the smallest unit, names unchanged: money DECIMAL(15,2) (revenue,
 *   price) in cents; seconds DECIMAL(x,3) (time_on_page_seconds, duration_seconds and their
 *   rollup sums) in milliseconds.
 */
export class SqliteSchema1765100000000 implements MigrationInterface {
  name = 'SqliteSchema1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE users (
      id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      email TEXT COLLATE NOCASE NOT NULL,
      created_at DATETIME NOT NULL
    )`);
    await q.query('CREATE UNIQUE INDEX uq_users_email ON users (email)');
    await q.query(`CREATE TABLE sites (
      id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL,
      domain TEXT NOT NULL,
      timezone TEXT NOT NULL,
      currency TEXT NOT NULL,
      tracking_mode TEXT NOT NULL CHECK (tracking_mode IN ('full', 'cookieless')),
      created_at DATETIME NOT NULL
    )`);
    await q.query(`CREATE TABLE memberships (
      site_id INTEGER NOT NULL,
      user_id INTEGER NOT NULL,
      created_at DATETIME NOT NULL,
      PRIMARY KEY (site_id, user_id),
      CONSTRAINT fk_memberships_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE,
      CONSTRAINT fk_memberships_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_memberships_user ON memberships (user_id, site_id)');
    await q.query(`CREATE TABLE api_keys (
      id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      user_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      prefix TEXT NOT NULL,
      key_hash TEXT NOT NULL,
      created_at DATETIME NOT NULL,
      expires_at DATETIME NULL,
      revoked_at DATETIME NULL,
      last_used_at DATETIME NULL,
      CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    )`);
    await q.query('CREATE UNIQUE INDEX uq_api_keys_hash ON api_keys (key_hash)');
    await q.query('CREATE INDEX ix_api_keys_user ON api_keys (user_id)');
    await q.query(`CREATE TABLE registered_events (
      id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      site_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      description TEXT NULL,
      registered_at DATETIME NOT NULL,
      CONSTRAINT fk_registered_events_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE
    )`);
    await q.query('CREATE UNIQUE INDEX uq_registered_events_site_name ON registered_events (site_id, name)');
    await q.query(`CREATE TABLE goals (
      id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      site_id INTEGER NOT NULL,
      name TEXT NOT NULL,
      type TEXT NOT NULL CHECK (type IN ('event', 'path')),
      match_value TEXT NOT NULL,
      created_at DATETIME NOT NULL,
      CONSTRAINT fk_goals_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE
    )`);
    await q.query('CREATE INDEX ix_goals_site ON goals (site_id, id)');
    // time_on_page_seconds in milliseconds, revenue in cents (see the mapping above).
    // step_key as MariaDB's (1765000000000): substr counts characters like LEFT.
    await q.query(`CREATE TABLE hits (
      seq INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
      site_id INTEGER NOT NULL,
      hit_id TEXT NOT NULL,
      type TEXT NOT NULL CHECK (type IN ('pageview', 'event', 'purchase')),
      ts DATETIME NOT NULL,
      session_id TEXT NOT NULL,
      visitor_id TEXT NOT NULL,
      path TEXT NULL,
      channel TEXT NULL,
      source TEXT NULL,
      country TEXT NULL,
      device TEXT NULL,
      browser TEXT NULL,
      time_on_page_seconds INTEGER NULL,
      scroll_depth INTEGER NULL,
      name TEXT NULL,
      order_id TEXT NULL,
      revenue INTEGER NULL,
      currency TEXT NULL,
      step_key TEXT GENERATED ALWAYS AS (CASE type WHEN 'event' THEN name WHEN 'pageview' THEN substr(path, 1, 255) END) VIRTUAL
    )`);
    await q.query('CREATE UNIQUE INDEX uq_hits_site_hit ON hits (site_id, hit_id)');
    await q.query('CREATE INDEX ix_hits_site_ts ON hits (site_id, ts)');
    await q.query('CREATE INDEX ix_hits_site_type_ts ON hits (site_id, type, ts)');
    await q.query('CREATE INDEX ix_hits_site_session ON hits (site_id, session_id, ts, seq)');
    await q.query('CREATE INDEX ix_hits_site_visitor ON hits (site_id, visitor_id, ts)');
    await q.query(
      'CREATE INDEX ix_hits_site_step ON hits (site_id, type, step_key, visitor_id, ts, seq, session_id)',
    );
    // revenue in cents.
    await q.query(`CREATE TABLE orders (
      site_id INTEGER NOT NULL,
      order_id TEXT NOT NULL,
      hit_id TEXT NOT NULL,
      ts DATETIME NOT NULL,
      session_id TEXT NOT NULL,
      visitor_id TEXT NOT NULL,
      revenue INTEGER NOT NULL,
      currency TEXT NOT NULL,
      PRIMARY KEY (site_id, order_id)
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_orders_site_ts ON orders (site_id, ts)');
    await q.query('CREATE INDEX ix_orders_site_session ON orders (site_id, session_id)');
    // price in cents.
    await q.query(`CREATE TABLE order_items (
      site_id INTEGER NOT NULL,
      order_id TEXT NOT NULL,
      line_no INTEGER NOT NULL,
      sku TEXT NOT NULL,
      name TEXT NULL,
      quantity INTEGER NOT NULL,
      price INTEGER NOT NULL,
      PRIMARY KEY (site_id, order_id, line_no)
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_order_items_site_sku ON order_items (site_id, sku)');
    // duration_seconds in milliseconds.
    await q.query(`CREATE TABLE sessions (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      visitor_id TEXT NOT NULL,
      started_at DATETIME NOT NULL,
      ended_at DATETIME NOT NULL,
      hits INTEGER NOT NULL,
      pageviews INTEGER NOT NULL,
      events INTEGER NOT NULL,
      purchases INTEGER NOT NULL,
      is_bounce INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      entry_path TEXT NULL,
      exit_path TEXT NULL,
      channel TEXT NOT NULL,
      source TEXT NOT NULL,
      country TEXT NOT NULL,
      device TEXT NOT NULL,
      browser TEXT NOT NULL,
      PRIMARY KEY (site_id, session_id)
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_sessions_site_start ON sessions (site_id, started_at)');
    await q.query('CREATE INDEX ix_sessions_site_visitor ON sessions (site_id, visitor_id, started_at)');
    await q.query('CREATE INDEX ix_sessions_site_end ON sessions (site_id, ended_at, started_at)');
    await q.query(`CREATE TABLE visitors (
      site_id INTEGER NOT NULL,
      visitor_id TEXT NOT NULL,
      first_session_at DATETIME NOT NULL,
      PRIMARY KEY (site_id, visitor_id)
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_visitors_site_first_session ON visitors (site_id, first_session_at)');
    await q.query(`CREATE TABLE dirty_sessions (
      site_id INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      marked_at DATETIME NOT NULL,
      PRIMARY KEY (site_id, session_id)
    ) WITHOUT ROWID`);
    await q.query('CREATE INDEX ix_dirty_sessions_marked ON dirty_sessions (marked_at)');
    // A single integer key: site_id is the rowid, as clustered as WITHOUT ROWID would make it.
    await q.query(`CREATE TABLE site_data_versions (
      site_id INTEGER NOT NULL,
      version INTEGER NOT NULL,
      changed_at DATETIME NOT NULL,
      PRIMARY KEY (site_id)
    )`);
    // duration_seconds in milliseconds.
    await q.query(`CREATE TABLE session_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('channel', 'source', 'country', 'device', 'browser')),
      bucket DATETIME NOT NULL,
      value TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      bounces INTEGER NOT NULL,
      session_pageviews INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, value)
    ) WITHOUT ROWID`);
    // time_on_page_seconds in milliseconds.
    await q.query(`CREATE TABLE hit_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      pageviews INTEGER NOT NULL,
      timed_pageviews INTEGER NOT NULL,
      time_on_page_seconds INTEGER NOT NULL,
      scroll_0_24 INTEGER NOT NULL,
      scroll_25_49 INTEGER NOT NULL,
      scroll_50_74 INTEGER NOT NULL,
      scroll_75_100 INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) WITHOUT ROWID`);
    // path_hash: the path's MD5, 16 bytes.
    await q.query(`CREATE TABLE session_path_rollups (
      site_id INTEGER NOT NULL,
      dimension TEXT NOT NULL CHECK (dimension IN ('entry_path', 'exit_path')),
      bucket DATETIME NOT NULL,
      path_hash BLOB NOT NULL,
      path TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      PRIMARY KEY (site_id, dimension, bucket, path_hash)
    ) WITHOUT ROWID`);
    // attributes_hash: the MD5 of the five attributes, 16 bytes; duration_seconds in milliseconds.
    await q.query(`CREATE TABLE session_attribute_rollups (
      site_id INTEGER NOT NULL,
      bucket DATETIME NOT NULL,
      attributes_hash BLOB NOT NULL,
      channel TEXT NOT NULL,
      source TEXT NOT NULL,
      country TEXT NOT NULL,
      device TEXT NOT NULL,
      browser TEXT NOT NULL,
      sessions INTEGER NOT NULL,
      bounces INTEGER NOT NULL,
      session_pageviews INTEGER NOT NULL,
      duration_seconds INTEGER NOT NULL,
      PRIMARY KEY (site_id, bucket, attributes_hash)
    ) WITHOUT ROWID`);
  }

  /** The reverse of `up`: each table before the tables its foreign keys name. */
  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'session_attribute_rollups',
      'session_path_rollups',
      'hit_rollups',
      'session_rollups',
      'site_data_versions',
      'dirty_sessions',
      'visitors',
      'sessions',
      'order_items',
      'orders',
      'hits',
      'goals',
      'registered_events',
      'api_keys',
      'memberships',
      'sites',
      'users',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
