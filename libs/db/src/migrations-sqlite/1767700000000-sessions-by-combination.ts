import { attributeKeySqlOf, fillAttributeCombinations } from '@app/stats/rollups/session-rollup';
import { ATTRIBUTE_DAYS_BY_COMBINATION } from '@app/stats/definitions';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { sqliteDialect as dialect } from '../sqlite/sqlite-dialect';

/**
 * The SQLite form of MariaDB's SessionsByCombination1767700000000 (libs/db/src/migrations). The
 * generated column's MD5 is the function the embedded driver registers on every connection it
 * opens (registerSqlFunctions), as the rollups' statements use it.
 */
export class SqliteSessionsByCombination1767700000000 implements MigrationInterface {
  name = 'SqliteSessionsByCombination1767700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sessions ADD COLUMN attributes_hash BLOB AS (${dialect.md5Bytes(attributeKeySqlOf(dialect, null))}) VIRTUAL`,
    );
    for (const [column, path] of [
      ['entry_hash', 'entry_path'],
      ['exit_hash', 'exit_path'],
    ]) {
      await q.query(`ALTER TABLE sessions ADD COLUMN ${column} BLOB AS (${dialect.md5Bytes(path)}) VIRTUAL`);
    }
    await q.query(
      `CREATE INDEX ix_sessions_site_combination
       ON sessions (site_id, attributes_hash, started_at, visitor_id, ended_at, pageviews, entry_hash, exit_hash)`,
    );
    await q.query(
      `CREATE INDEX ${ATTRIBUTE_DAYS_BY_COMBINATION} ON session_attribute_day_rollups (site_id, attributes_hash, bucket)`,
    );
    await q.query(`CREATE TABLE attribute_combinations (
      site_id INTEGER NOT NULL,
      attributes_hash BLOB NOT NULL,
      channel TEXT NOT NULL,
      source TEXT NOT NULL,
      country TEXT NOT NULL,
      device TEXT NOT NULL,
      browser TEXT NOT NULL,
      PRIMARY KEY (site_id, attributes_hash)
    ) WITHOUT ROWID`);
    await fillAttributeCombinations(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE attribute_combinations');
    await q.query(`DROP INDEX ${ATTRIBUTE_DAYS_BY_COMBINATION}`);
    await q.query('DROP INDEX ix_sessions_site_combination');
    for (const column of ['exit_hash', 'entry_hash', 'attributes_hash']) {
      await q.query(`ALTER TABLE sessions DROP COLUMN ${column}`);
    }
  }
}
