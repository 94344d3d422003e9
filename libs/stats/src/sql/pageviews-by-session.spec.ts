import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { resolveRange } from '../date-range';
import { parseFilters } from '../query/filters';
import type { StatsQuery } from '../query/stats-query';
import { eventsThroughSessions, hitsThroughSessions } from './pageviews-by-session';

const query = (filters: string, pageRowsCurrent?: boolean): StatsQuery => ({
  site: { id: 7, timezone: 'UTC', currency: 'EUR', trackingMode: 'full' },
  range: resolveRange({ from: '2026-03-20', to: '2026-04-02', siteTimezone: 'UTC', maxDays: 731 }),
  filters: parseFilters(filters),
  pageRowsCurrent,
});

/** The MariaDB text of a statement's parts, split at its unions, index markers rendered. */
function parts(statement: ReturnType<typeof hitsThroughSessions>): string[] {
  const compiled = sql`${statement}`.compile(mariadbDialect.builder);
  return mariadbDialect.renderIndexHints(compiled).sql.split('UNION ALL');
}

describe('the sessions a statement reads through: settled ones from session_pages, queued ones tested', () => {
  const pricingRows = 'FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` = ?';

  it('reads the settled sessions under page== from session_pages even while a queued one has gained the page', () => {
    for (const current of [true, false]) {
      const [inRange, before, queued] = parts(
        hitsThroughSessions(
          mariadbDialect,
          query('page==/pricing', current),
          'pageview',
          () => sql`h.ts AS t`,
        ),
      );
      for (const settled of [inRange, before]) {
        expect(settled).toContain(pricingRows);
        expect(settled).not.toContain('hits fp');
      }
      // The queued ones: their session_pages row while the rows are current; otherwise their own hits.
      expect(queued).toContain(
        current
          ? 'FROM session_pages fs FORCE INDEX (ix_session_pages_session)'
          : 'FROM hits fp FORCE INDEX (ix_hits_site_session)',
      );
    }
  });

  it("counts an event's sessions from the settled rows' event counts in either case", () => {
    const [inRange, before] = parts(eventsThroughSessions(mariadbDialect, query('page==/pricing', false)));
    for (const settled of [inRange, before]) {
      expect(settled).toContain(pricingRows);
      expect(settled).toContain('WHEN b.hits = s.events THEN 1');
    }
  });

  it('tests the hits of every session when the rows were not asked for (pageRowsCurrent unset)', () => {
    const [inRange] = parts(
      hitsThroughSessions(mariadbDialect, query('page==/pricing'), 'pageview', () => sql`h.ts AS t`),
    );
    expect(inRange).not.toContain('session_pages');
    expect(inRange).toContain('hits fp');
  });
});
