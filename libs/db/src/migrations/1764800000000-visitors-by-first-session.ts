import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Visitors by the start of their first session: the engagement report counts the range's new
 * visitors as those whose first session started in the range, one index range instead of a
 * lookup per visitor of the range.
 */
export class VisitorsByFirstSession1764800000000 implements MigrationInterface {
  name = 'VisitorsByFirstSession1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE visitors ADD KEY ix_visitors_site_first_session (site_id, first_session_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE visitors DROP KEY ix_visitors_site_first_session');
  }
}
