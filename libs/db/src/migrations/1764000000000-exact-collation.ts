import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion } from '../dialect';

/** Every table whose text columns hold tracker data or names that must compare exactly. */
const TABLES = [
  'sites',
  'memberships',
  'api_keys',
  'registered_events',
  'goals',
  'hits',
  'orders',
  'order_items',
  'sessions',
  'visitors',
  'dirty_sessions',
];

/**
 * utf8mb4_bin is a PAD SPACE collation: "e1" and "e1 " were one id to the database (a
 * duplicate key on import), and a funnel step `/pricing` matched `/pricing `. SPEC §1 says
 * ids, paths and names compare exactly, so every text column moves to the NO PAD binary
 * collation of the server (utf8mb4_nopad_bin on MariaDB, utf8mb4_0900_bin on MySQL 8), and so
 * does the database default for tables added later. Two columns keep their own collation:
 * users.email (case-insensitive on purpose) and api_keys.key_hash (ASCII hex of fixed length).
 */
export class ExactCollation1764000000000 implements MigrationInterface {
  name = 'ExactCollation1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await this.convert(q, await this.exactCollation(q));
  }

  /** Back to utf8mb4_bin; fails with a duplicate key if ids differing only by trailing spaces exist. */
  async down(q: QueryRunner): Promise<void> {
    await this.convert(q, 'utf8mb4_bin');
  }

  private async exactCollation(q: QueryRunner): Promise<string> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    return dialectForServerVersion(v).exactCollation;
  }

  private async convert(q: QueryRunner, collation: string): Promise<void> {
    await q.query(`ALTER DATABASE CHARACTER SET utf8mb4 COLLATE ${collation}`);
    for (const table of TABLES)
      await q.query(`ALTER TABLE ${table} CONVERT TO CHARACTER SET utf8mb4 COLLATE ${collation}`);
    // CONVERT TO converts every text column, this one too (also when named in the same statement).
    await q.query(
      'ALTER TABLE api_keys MODIFY key_hash CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL',
    );
    // users: only the table default; email stays utf8mb4_unicode_ci.
    await q.query(`ALTER TABLE users DEFAULT CHARACTER SET utf8mb4 COLLATE ${collation}`);
  }
}
