import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions stored in order of their start (MariaDB/MySQL; InnoDB keeps a table's rows in its
 * primary key's order). Every raw read of a range's sessions (visitors and entry/exit pages
 * under filters on several attributes, the new/returning split under filters, page and goal
 * conditions) walked ix_sessions_site_start and looked each session up by (site_id,
 * session_id): at 1M pageviews, the distinct visitors of the range's `source==google;
 * device==mobile` sessions took 0.62-0.72 s that way and 0.11-0.12 s reading the rows in
 * place (BENCHMARKS.md run AC). The primary key is now (site_id, started_at, session_id), which
 * ix_sessions_site_start was the prefix of; a session by its id is found through
 * uq_sessions_site_session, which also keeps a session one row: `aggregate`'s REPLACE of a
 * session whose start moved removes its old row through it. SQLite keeps its schema (its
 * sessions are a rowid table).
 */
export class SessionsClusteredByStart1766800000000 implements MigrationInterface {
  name = 'SessionsClusteredByStart1766800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sessions
         DROP PRIMARY KEY,
         ADD PRIMARY KEY (site_id, started_at, session_id),
         ADD UNIQUE KEY uq_sessions_site_session (site_id, session_id),
         DROP KEY ix_sessions_site_start`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sessions
         DROP PRIMARY KEY,
         ADD PRIMARY KEY (site_id, session_id),
         DROP KEY uq_sessions_site_session,
         ADD KEY ix_sessions_site_start (site_id, started_at)`,
    );
  }
}
