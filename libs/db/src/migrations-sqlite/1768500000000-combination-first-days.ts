import { MigrationInterface, QueryRunner } from 'typeorm';
import { COMBINATION_FIRST_DAYS } from '../migrations/1768500000000-combination-first-days';

/**
 * The SQLite form of MariaDB's CombinationFirstDays1768500000000 (libs/db/src/migrations). A
 * WITHOUT ROWID table is stored in primary-key order too, and SQLite cannot change a primary
 * key: each table is written again under the new key, from its own CREATE statement.
 */
export class SqliteCombinationFirstDays1768500000000 implements MigrationInterface {
  name = 'SqliteCombinationFirstDays1768500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const { table, byDay } of COMBINATION_FIRST_DAYS) {
      await rekey(q, table, 'site_id, bucket, attributes_hash', 'site_id, attributes_hash, bucket');
      await q.query(`CREATE INDEX ${byDay} ON ${table} (site_id, bucket)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table, byCombination } of COMBINATION_FIRST_DAYS) {
      await rekey(q, table, 'site_id, attributes_hash, bucket', 'site_id, bucket, attributes_hash');
      await q.query(`CREATE INDEX ${byCombination} ON ${table} (site_id, attributes_hash, bucket)`);
    }
  }
}

/** `table` written again with the primary key `to` instead of `from` (its indexes dropped). */
async function rekey(q: QueryRunner, table: string, from: string, to: string): Promise<void> {
  const [{ sql: create }] = (await q.query(
    `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`,
    [table],
  )) as Array<{ sql: string }>;
  const key = `PRIMARY KEY (${from})`;
  if (!create.includes(key)) throw new Error(`${table} is not keyed by (${from})`);
  const next = `${table}_rekeyed`;
  await q.query(
    create.replace(key, `PRIMARY KEY (${to})`).replace(/^CREATE TABLE "?\w+"?/, `CREATE TABLE ${next}`),
  );
  await q.query(`INSERT INTO ${next} SELECT * FROM ${table}`);
  await q.query(`DROP TABLE ${table}`);
  await q.query(`ALTER TABLE ${next} RENAME TO ${table}`);
}
