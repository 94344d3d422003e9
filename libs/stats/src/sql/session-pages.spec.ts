import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { STEP_KEY_CHARS } from '../definitions';
import type { SessionScope, StatsFilter } from './session-filter';
import {
  pageOfCondition,
  pageRowsOfCondition,
  sessionPageRows,
  sessionPagesPath,
  sessionsSource,
} from './session-pages';

const page = (text: string, more: Partial<StatsFilter> = {}): StatsFilter => ({
  dimension: 'page',
  operator: '==',
  values: [{ text, prefix: false }],
  ...more,
});

const settled = (filters: StatsFilter[], more: Partial<SessionScope> = {}): SessionScope => ({
  site: { id: 7 },
  filters,
  pageRowsCurrent: true,
  ...more,
});

describe('which requests read session_pages', () => {
  it('reads it for page== one whole path, while its rows of the path are current', () => {
    expect(sessionPagesPath(settled([page('/pricing')]))).toBe('/pricing');
    // A literal trailing `*` (escaped in the filter) is a whole path.
    expect(sessionPagesPath(settled([page('/sale*')]))).toBe('/sale*');
  });

  it('reads the hits while a queued session has gained the path, or when that was not asked, and on the raw path', () => {
    expect(sessionPagesPath(settled([page('/pricing')], { pageRowsCurrent: false }))).toBeUndefined();
    expect(sessionPagesPath(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPagesPath(settled([page('/pricing')], { tables: 'raw' }))).toBeUndefined();
  });

  it('reads the hits for what a session could be counted under twice, or not at all', () => {
    const cases: StatsFilter[][] = [
      [page('/blog/', { values: [{ text: '/blog/', prefix: true }] })],
      [
        page('/a', {
          values: [
            { text: '/a', prefix: false },
            { text: '/b', prefix: false },
          ],
        }),
      ],
      [page('/pricing', { operator: '!=' })],
      [page('/pricing'), { dimension: 'country', operator: '==', values: [{ text: 'DE', prefix: false }] }],
      [{ dimension: 'entry_page', operator: '==', values: [{ text: '/pricing', prefix: false }] }],
      [],
    ];
    for (const filters of cases) {
      expect(pageOfCondition(filters)).toBeUndefined();
      expect(sessionPagesPath(settled(filters))).toBeUndefined();
    }
  });

  it('reads the hits for a path as long as page_key or longer, which its key does not tell apart', () => {
    const under = 'x'.repeat(STEP_KEY_CHARS - 1);
    expect(sessionPagesPath(settled([page(under)]))).toBe(under);
    expect(pageOfCondition([page('x'.repeat(STEP_KEY_CHARS))])).toBeUndefined();
    // Characters, not UTF-16 units: 254 emoji fit.
    expect(pageOfCondition([page('😀'.repeat(STEP_KEY_CHARS - 1))])).toBe('😀'.repeat(STEP_KEY_CHARS - 1));
  });
});

describe('entry and exit page conditions read from session_pages', () => {
  const endpoint = (
    dimension: 'entry_page' | 'exit_page',
    values: Array<{ text: string; prefix: boolean }>,
    operator: '==' | '!=' = '==',
  ): StatsFilter => ({ dimension, operator, values });
  const whole = (text: string) => ({ text, prefix: false });

  it('reads the rows under one whole path whose session entered or left by it', () => {
    expect(pageRowsOfCondition([endpoint('exit_page', [whole('/pricing')])])).toEqual({
      path: '/pricing',
      endpoint: 'exit_path',
    });
    expect(pageRowsOfCondition([endpoint('entry_page', [whole('/')])])).toEqual({
      path: '/',
      endpoint: 'entry_path',
    });
    expect(pageRowsOfCondition([page('/pricing')])).toEqual({ path: '/pricing' });
  });

  it('needs no check of the queue (it tests the session’s row, written with its rows), but not on the raw path', () => {
    const exit = [endpoint('exit_page', [whole('/pricing')])];
    expect(sessionPageRows(settled(exit, { pageRowsCurrent: undefined }))).toEqual({
      path: '/pricing',
      endpoint: 'exit_path',
    });
    expect(sessionPageRows(settled(exit, { tables: 'raw' }))).toBeUndefined();
    // page== still does.
    expect(sessionPageRows(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPageRows(settled([page('/pricing')]))).toEqual({ path: '/pricing' });
  });

  it('tests the sessions for two paths, a prefix, !=, a path page_key does not tell apart, or another condition beside', () => {
    const cases: StatsFilter[][] = [
      [endpoint('entry_page', [whole('/'), whole('/pricing')])],
      [endpoint('entry_page', [{ text: '/blog/', prefix: true }])],
      [endpoint('exit_page', [whole('/pricing')], '!=')],
      [endpoint('exit_page', [whole('x'.repeat(STEP_KEY_CHARS))])],
      [
        endpoint('exit_page', [whole('/pricing')]),
        { dimension: 'country', operator: '==', values: [whole('DE')] },
      ],
      [endpoint('entry_page', [whole('/')]), endpoint('exit_page', [whole('/pricing')])],
    ];
    for (const filters of cases) expect(sessionPageRows(settled(filters))).toBeUndefined();
  });

  it('selects each session once, by the row whose page is its entry (exit) page; the sessions table where asked', () => {
    const scope = settled([endpoint('entry_page', [whole('/pricing')])]);
    const source = sessionsSource(scope, 's');
    expect(source.pages).toBe(true);
    const compiled = sql`SELECT 1 FROM ${source.raw}`.compile(mariadbDialect.builder);
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` = ? AND `s`.`entry_path` = `s`.`page_key`) s',
    );
    expect(compiled.parameters).toEqual([7, '/pricing']);
    expect(sessionsSource(scope, 's', { endpoints: false }).pages).toBe(false);
    // page== keeps its rows whatever is asked.
    expect(sessionsSource(settled([page('/pricing')]), 's', { endpoints: false }).pages).toBe(true);
  });
});

describe('what a statement reads its sessions from', () => {
  const text = (scope: SessionScope) => {
    const source = sessionsSource(scope, 's');
    return { pages: source.pages, sql: sql`SELECT 1 FROM ${source.raw}`.compile(mariadbDialect.builder) };
  };

  it('the path’s rows of session_pages, the condition in place of the test of each session', () => {
    const { pages, sql: compiled } = text(settled([page('/pricing')]));
    expect(pages).toBe(true);
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` = ?) s',
    );
    expect(compiled.parameters).toEqual([7, '/pricing']);
  });

  it('the sessions table otherwise', () => {
    const { pages, sql: compiled } = text(settled([page('/pricing')], { pageRowsCurrent: false }));
    expect(pages).toBe(false);
    expect(compiled.sql).toBe('SELECT 1 FROM sessions s');
  });
});
