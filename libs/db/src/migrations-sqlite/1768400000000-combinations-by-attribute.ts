import { MigrationInterface, QueryRunner } from 'typeorm';
import { COMBINATION_INDEXES } from '../migrations/1768400000000-combinations-by-attribute';

/** The SQLite form of MariaDB's CombinationsByAttribute1768400000000 (libs/db/src/migrations). */
export class SqliteCombinationsByAttribute1768400000000 implements MigrationInterface {
  name = 'SqliteCombinationsByAttribute1768400000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns] of Object.entries(COMBINATION_INDEXES)) {
      await q.query(`CREATE INDEX ${name} ON attribute_combinations (${columns.join(', ')})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of Object.keys(COMBINATION_INDEXES)) await q.query(`DROP INDEX ${name}`);
  }
}
