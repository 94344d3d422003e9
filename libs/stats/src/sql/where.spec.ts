import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { resolveRange } from '../date-range';
import { parseFilters } from '../query/filters';
import type { StatsQuery } from '../query/stats-query';
import { where } from './where';

/** The MariaDB text of a condition, its index markers rendered as the engine's hints. */
function rendered(condition: ReturnType<typeof where.sessions>): string {
  const compiled = sql`SELECT 1 WHERE ${condition}`.compile(mariadbDialect.builder);
  return mariadbDialect.renderIndexHints(compiled).sql;
}

describe('where.sessionsByKey: few sessions, each read by key', () => {
  const query = (filters: string, pageRowsCurrent?: boolean): StatsQuery => ({
    site: { id: 7, timezone: 'UTC', currency: 'EUR', trackingMode: 'full' },
    range: resolveRange({ from: '2026-03-20', to: '2026-04-02', siteTimezone: 'UTC', maxDays: 731 }),
    filters: parseFilters(filters),
    pageRowsCurrent,
  });

  it("looks each session's row up in session_pages under page== rows that are current", () => {
    const text = rendered(where.sessionsByKey(query('page==/pricing;country==DE', true), 's'));
    expect(text).toContain(
      'FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id = `s`.`site_id` AND fs.session_id = `s`.`session_id`',
    );
    // The condition on an attribute is tested on that row too.
    expect(text).toContain('AND `fs`.`page_key` = ? AND ((`fs`.`country` IN (?))))');
    expect(text).toContain('`s`.`started_at` >= ? AND `s`.`started_at` < ?');
    expect(text).not.toContain('hits');
  });

  it('is where.sessions when those rows are not current, or for any other condition', () => {
    for (const [filters, current] of [
      ['page==/pricing', false],
      ['page==/pricing', undefined],
      ['page!=/pricing', true],
      ['country==DE', true],
      ['', true],
    ] as const) {
      const q = query(filters, current);
      expect(rendered(where.sessionsByKey(q, 's'))).toBe(rendered(where.sessions(q, 's')));
    }
  });
});
