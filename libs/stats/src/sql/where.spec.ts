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

const query = (filters: string, pageRowsCurrent?: boolean): StatsQuery => ({
  site: { id: 7, timezone: 'UTC', currency: 'EUR', trackingMode: 'full' },
  range: resolveRange({ from: '2026-03-20', to: '2026-04-02', siteTimezone: 'UTC', maxDays: 731 }),
  filters: parseFilters(filters),
  pageRowsCurrent,
});

describe("where.sessionOfRowByKey: a row's session, read by key", () => {
  const text = (filters: string, current?: boolean) => {
    const condition = where.sessionOfRowByKey(query(filters, current), 'po');
    return condition === undefined ? undefined : rendered(condition);
  };

  it("looks the session's row up in session_pages under page== rows that are current, with its start", () => {
    const condition = text('page==/pricing;country==DE', true);
    expect(condition).toContain(
      'FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id = `po`.`site_id` AND fs.session_id = `po`.`session_id`',
    );
    // The session started in the range; a condition on an attribute is tested on that row too.
    expect(condition).toContain(
      'AND fs.started_at >= ? AND fs.started_at < ? AND `fs`.`page_key` = ? AND ((`fs`.`country` IN (?))))',
    );
    expect(condition).not.toContain('hits');
    expect(condition).not.toContain('sessions');
  });

  it("under page!= one path whose rows are current, reads the session's row for its start and finds no row under the path", () => {
    const condition = text('page!=/pricing', true);
    expect(condition).toBe(
      'SELECT 1 WHERE (EXISTS (SELECT 1 FROM sessions fs WHERE fs.site_id = `po`.`site_id` AND fs.session_id = `po`.`session_id` AND fs.started_at >= ? AND fs.started_at < ?)' +
        ' AND NOT EXISTS (SELECT 1 FROM session_pages fp FORCE INDEX (ix_session_pages_session) WHERE fp.site_id = `po`.`site_id` AND fp.session_id = `po`.`session_id` AND `fp`.`page_key` = ?))',
    );
    expect(condition).not.toContain('hits');
  });

  it('is undefined when those rows are not current, or for any other condition', () => {
    for (const [filters, current] of [
      ['page==/pricing', false],
      ['page==/pricing', undefined],
      ['page!=/pricing', false],
      ['page!=/pricing', undefined],
      ['page!=/blog/*', true],
      ['page!=/pricing;country==DE', true],
      ['entry_page==/pricing', true],
      ['country==DE', true],
      ['', true],
    ] as const) {
      expect(text(filters, current)).toBeUndefined();
    }
  });
});

describe('where.queuedSessions: the queued sessions, each tested by key', () => {
  it("looks each session's row up in session_pages under page== rows that are current", () => {
    const text = rendered(where.queuedSessions(query('page==/pricing', true), 'qs'));
    expect(text).toContain(
      'FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id = `qs`.`site_id` AND fs.session_id = `qs`.`session_id` AND `fs`.`page_key` = ?',
    );
    expect(text).not.toContain('hits');
  });

  it("otherwise tests a page or goal condition on the session's own hits, by the session index alone", () => {
    for (const filters of ['page==/pricing', 'page!=/pricing']) {
      const text = rendered(where.queuedSessions(query(filters, false), 'qs'));
      // The step index would let MariaDB build the set of every session with a hit of the path.
      expect(text).toContain('FROM hits fp FORCE INDEX (ix_hits_site_session) WHERE fp.site_id = ?');
      expect(text).not.toContain('session_pages');
    }
  });

  it("tests conditions on attributes on the session's own columns, not through its combination", () => {
    const text = rendered(where.queuedSessions(query('country==DE;device!=mobile'), 'qs'));
    expect(text).toContain('AND ((`qs`.`country` IN (?)) AND NOT (`qs`.`device` IN (?))))');
    expect(text).not.toContain('attributes_hash');
  });

  it('is the site and range alone without filters', () => {
    const q = query('');
    expect(rendered(where.queuedSessions(q, 'qs'))).toBe(rendered(where.sessions(q, 'qs')));
  });
});
