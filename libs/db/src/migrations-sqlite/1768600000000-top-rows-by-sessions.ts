import { TOP_ROWS_INDEXES } from '@app/stats/definitions';
import { MigrationInterface, QueryRunner } from 'typeorm';

/** The SQLite form of MariaDB's TopRowsBySessions1768600000000 (libs/db/src/migrations). */
export class SqliteTopRowsBySessions1768600000000 implements MigrationInterface {
  name = 'SqliteTopRowsBySessions1768600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, { name, columns }] of Object.entries(TOP_ROWS_INDEXES)) {
      await q.query(`CREATE INDEX ${name} ON ${table} (${columns.join(', ')})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { name } of Object.values(TOP_ROWS_INDEXES)) await q.query(`DROP INDEX ${name}`);
  }
}
