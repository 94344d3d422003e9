import { attributeKeySqlOf } from '@app/stats/rollups/session-rollup';
import { SESSION_PAGES } from '@app/stats/sql/session-pages';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's SessionPageHashes1768900000000 (libs/db/src/migrations): the
 * combination's hash beside the rows, as `sessions` generates it. VIRTUAL, where MariaDB stores
 * the three hashes: SQLite adds no STORED column to a table that exists, and rebuilding the table
 * would restate all of it; at the embedded engine's sizes the hash is computed as a row is read.
 */
export class SqliteSessionPageHashes1768900000000 implements MigrationInterface {
  name = 'SqliteSessionPageHashes1768900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE ${SESSION_PAGES} ADD COLUMN attributes_hash BLOB AS (${dialect.md5Bytes(attributeKeySqlOf(dialect, null))}) VIRTUAL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ${SESSION_PAGES} DROP COLUMN attributes_hash`);
  }
}
