import { TOP_ROWS_INDEXES } from '@app/stats/definitions';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The session and entry/exit page rollups by day and by block of days, indexed by site, list,
 * bucket and then sessions (TOP_ROWS_INDEXES): the overview reads each day's and each block's
 * top rows of an unfiltered list and sums only the values found there, where it summed every
 * value of the range (overviewStatements.partTopRows, OverviewQueries.topLists).
 */
export class TopRowsBySessions1768600000000 implements MigrationInterface {
  name = 'TopRowsBySessions1768600000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, { name, columns }] of Object.entries(TOP_ROWS_INDEXES)) {
      await q.query(`ALTER TABLE ${table} ADD KEY ${name} (${columns.join(', ')})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, { name }] of Object.entries(TOP_ROWS_INDEXES)) {
      await q.query(`ALTER TABLE ${table} DROP KEY ${name}`);
    }
  }
}
