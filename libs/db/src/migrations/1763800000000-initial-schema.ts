import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The whole first schema. Data tables use a binary collation: ids, paths and attribute values
 * are compared and grouped exactly as the tracker sent them.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    const data = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
    await q.query(`CREATE TABLE users (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      email VARCHAR(320) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_users_email (email)
    ) ${data}`);
    await q.query(`CREATE TABLE sites (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      name VARCHAR(255) NOT NULL,
      domain VARCHAR(255) NOT NULL,
      timezone VARCHAR(64) NOT NULL,
      currency CHAR(3) NOT NULL,
      tracking_mode ENUM('full','cookieless') NOT NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id)
    ) ${data}`);
    await q.query(`CREATE TABLE memberships (
      site_id INT UNSIGNED NOT NULL,
      user_id INT UNSIGNED NOT NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (site_id, user_id),
      KEY ix_memberships_user (user_id, site_id),
      CONSTRAINT fk_memberships_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE,
      CONSTRAINT fk_memberships_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    ) ${data}`);
    await q.query(`CREATE TABLE api_keys (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      user_id INT UNSIGNED NOT NULL,
      name VARCHAR(255) NOT NULL,
      prefix VARCHAR(16) NOT NULL,
      key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
      created_at DATETIME(3) NOT NULL,
      expires_at DATETIME(3) NULL,
      revoked_at DATETIME(3) NULL,
      last_used_at DATETIME(3) NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_api_keys_hash (key_hash),
      KEY ix_api_keys_user (user_id),
      CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    ) ${data}`);
    await q.query(`CREATE TABLE registered_events (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      site_id INT UNSIGNED NOT NULL,
      name VARCHAR(255) NOT NULL,
      description VARCHAR(1000) NULL,
      registered_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_registered_events_site_name (site_id, name),
      CONSTRAINT fk_registered_events_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE
    ) ${data}`);
    await q.query(`CREATE TABLE goals (
      id INT UNSIGNED NOT NULL AUTO_INCREMENT,
      site_id INT UNSIGNED NOT NULL,
      name VARCHAR(255) NOT NULL,
      type ENUM('event','path') NOT NULL,
      match_value VARCHAR(2048) NOT NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      KEY ix_goals_site (site_id, id),
      CONSTRAINT fk_goals_site FOREIGN KEY (site_id) REFERENCES sites (id) ON DELETE CASCADE
    ) ${data}`);
    // seq is the import order: it breaks ts ties ("hit order", SPEC §1).
    await q.query(`CREATE TABLE hits (
      seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
      site_id INT UNSIGNED NOT NULL,
      hit_id VARCHAR(64) NOT NULL,
      type ENUM('pageview','event','purchase') NOT NULL,
      ts DATETIME(3) NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      path VARCHAR(2048) NULL,
      channel VARCHAR(255) NULL,
      source VARCHAR(255) NULL,
      country VARCHAR(255) NULL,
      device VARCHAR(255) NULL,
      browser VARCHAR(255) NULL,
      time_on_page_seconds DECIMAL(12,3) NULL,
      scroll_depth TINYINT UNSIGNED NULL,
      name VARCHAR(255) NULL,
      order_id VARCHAR(255) NULL,
      revenue DECIMAL(15,2) NULL,
      currency CHAR(3) NULL,
      PRIMARY KEY (seq),
      UNIQUE KEY uq_hits_site_hit (site_id, hit_id),
      KEY ix_hits_site_ts (site_id, ts),
      KEY ix_hits_site_type_ts (site_id, type, ts),
      KEY ix_hits_site_session (site_id, session_id, ts, seq),
      KEY ix_hits_site_visitor (site_id, visitor_id, ts)
    ) ${data}`);
    await q.query(`CREATE TABLE orders (
      site_id INT UNSIGNED NOT NULL,
      order_id VARCHAR(255) NOT NULL,
      hit_id VARCHAR(64) NOT NULL,
      ts DATETIME(3) NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      revenue DECIMAL(15,2) NOT NULL,
      currency CHAR(3) NOT NULL,
      PRIMARY KEY (site_id, order_id),
      KEY ix_orders_site_ts (site_id, ts),
      KEY ix_orders_site_session (site_id, session_id)
    ) ${data}`);
    await q.query(`CREATE TABLE order_items (
      site_id INT UNSIGNED NOT NULL,
      order_id VARCHAR(255) NOT NULL,
      line_no SMALLINT UNSIGNED NOT NULL,
      sku VARCHAR(255) NOT NULL,
      name VARCHAR(255) NULL,
      quantity INT UNSIGNED NOT NULL,
      price DECIMAL(15,2) NOT NULL,
      PRIMARY KEY (site_id, order_id, line_no),
      KEY ix_order_items_site_sku (site_id, sku)
    ) ${data}`);
    await q.query(`CREATE TABLE sessions (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      started_at DATETIME(3) NOT NULL,
      ended_at DATETIME(3) NOT NULL,
      hits INT UNSIGNED NOT NULL,
      pageviews INT UNSIGNED NOT NULL,
      events INT UNSIGNED NOT NULL,
      purchases INT UNSIGNED NOT NULL,
      is_bounce TINYINT(1) NOT NULL,
      duration_seconds DECIMAL(14,3) NOT NULL,
      entry_path VARCHAR(2048) NULL,
      exit_path VARCHAR(2048) NULL,
      channel VARCHAR(255) NOT NULL,
      source VARCHAR(255) NOT NULL,
      country VARCHAR(255) NOT NULL,
      device VARCHAR(255) NOT NULL,
      browser VARCHAR(255) NOT NULL,
      PRIMARY KEY (site_id, session_id),
      KEY ix_sessions_site_start (site_id, started_at),
      KEY ix_sessions_site_visitor (site_id, visitor_id, started_at)
    ) ${data}`);
    await q.query(`CREATE TABLE visitors (
      site_id INT UNSIGNED NOT NULL,
      visitor_id VARCHAR(64) NOT NULL,
      first_session_at DATETIME(3) NOT NULL,
      PRIMARY KEY (site_id, visitor_id)
    ) ${data}`);
    // The aggregation queue: sessions whose hits changed since they were last derived.
    await q.query(`CREATE TABLE dirty_sessions (
      site_id INT UNSIGNED NOT NULL,
      session_id VARCHAR(64) NOT NULL,
      marked_at DATETIME(3) NOT NULL,
      PRIMARY KEY (site_id, session_id),
      KEY ix_dirty_sessions_marked (marked_at)
    ) ${data}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
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
