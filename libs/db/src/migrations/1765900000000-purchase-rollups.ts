import { sessionPurchased } from '@app/stats/commerce';
import { sql } from 'kysely';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { dialectForServerVersion, SqlDialect } from '../dialect';

/**
 * Purchasing sessions (SPEC §1: sessions of the range that contain an order) by 15-minute UTC
 * bucket of the session start. E-commerce found them by looking up the session of every order
 * since the range start (about 92k lookups at 10M pageviews). `sessions.purchased` records
 * whether a session had an order when `aggregate` last derived it, which is what the rollup
 * counted: the sessions queued since are read on top (their order now, minus that flag).
 */
export class PurchaseRollups1765900000000 implements MigrationInterface {
  name = 'PurchaseRollups1765900000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ v }] = (await q.query('SELECT VERSION() AS v')) as Array<{ v: string }>;
    const dialect = dialectForServerVersion(v);
    await q.query('ALTER TABLE sessions ADD COLUMN purchased TINYINT(1) NOT NULL DEFAULT 0');
    await q.query(`CREATE TABLE purchase_rollups (
      site_id INT UNSIGNED NOT NULL,
      bucket DATETIME NOT NULL,
      sessions INT NOT NULL,
      PRIMARY KEY (site_id, bucket)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${dialect.exactCollation}`);
    await buildPurchaseRollups(q, dialect);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE purchase_rollups');
    await q.query('ALTER TABLE sessions DROP COLUMN purchased');
  }
}

/** Flags the derived sessions that hold an order, and counts them by bucket of their start. */
export async function buildPurchaseRollups(q: QueryRunner, dialect: SqlDialect): Promise<void> {
  const flag = sql`UPDATE sessions SET purchased = 1 WHERE ${sessionPurchased('sessions')}`.compile(
    dialect.builder,
  );
  await q.query(flag.sql, [...flag.parameters]);
  const bucket = dialect.floorToQuarterHour('started_at');
  await q.query(
    `INSERT INTO purchase_rollups (site_id, bucket, sessions)
       SELECT site_id, ${bucket}, COUNT(*) FROM sessions WHERE purchased = 1 GROUP BY site_id, ${bucket}`,
  );
}
