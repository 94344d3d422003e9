import { CompiledQuery, sql } from 'kysely';
import { mariadbDialect, tableWithIndexMarker } from './dialect';

describe('index hints written without a dialect', () => {
  it('renders every marker as the engine hint tableWithIndex writes', () => {
    const sql = `SELECT 1 FROM ${tableWithIndexMarker('hits', 'gh', 'ix_hits_site_session')} WHERE EXISTS (SELECT 1 FROM ${tableWithIndexMarker('hits', 'fp', 'ix_hits_site_session')})`;
    expect(mariadbDialect.renderIndexHints(CompiledQuery.raw(sql, [1])).sql).toBe(
      `SELECT 1 FROM ${mariadbDialect.tableWithIndex('hits', 'gh', 'ix_hits_site_session')} WHERE EXISTS (SELECT 1 FROM ${mariadbDialect.tableWithIndex('hits', 'fp', 'ix_hits_site_session')})`,
    );
  });

  it('renders a marker of several indexes as one hint naming them all (MariaDB chooses among them)', () => {
    const marked = `SELECT 1 FROM ${tableWithIndexMarker('hits', 'fp', ['ix_hits_site_step', 'ix_hits_site_session'])}`;
    expect(mariadbDialect.renderIndexHints(CompiledQuery.raw(marked, [])).sql).toBe(
      'SELECT 1 FROM hits fp FORCE INDEX (ix_hits_site_step, ix_hits_site_session)',
    );
    expect(() => tableWithIndexMarker('hits', 'fp', [])).toThrow(/names no index/);
    expect(() => tableWithIndexMarker('hits', 'fp', ['ix_a', 'ix*/ DROP'])).toThrow(/not an index name/);
  });

  it('leaves a statement without markers as it is', () => {
    const compiled = CompiledQuery.raw('SELECT 1');
    expect(mariadbDialect.renderIndexHints(compiled)).toBe(compiled);
  });

  it('refuses an index name that is not a plain identifier', () => {
    expect(() => tableWithIndexMarker('hits', 'h', 'ix*/ DROP')).toThrow(/not an index name/);
  });
});

describe('a derived table the engine materialises', () => {
  it('keeps the SELECT and limits it by more rows than a table can hold', () => {
    const compiled =
      sql`SELECT * FROM (${mariadbDialect.materialized(sql`SELECT h.seq FROM hits h`)}) d`.compile(
        mariadbDialect.builder,
      );
    expect(compiled.sql).toBe('SELECT * FROM (SELECT h.seq FROM hits h LIMIT 18446744073709551615) d');
  });
});

describe('locking reads of several conditions', () => {
  it('reads and locks each condition in a SELECT of its own, in the order given', () => {
    expect(mariadbDialect.lockingReadEach('SELECT k FROM q', ['k = ?', 'k IN (?, ?)'])).toBe(
      '(SELECT k FROM q WHERE k = ? FOR UPDATE) UNION ALL (SELECT k FROM q WHERE k IN (?, ?) FOR UPDATE)',
    );
  });
});
