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
    expect(sessionPagesPath(settled([page('/pricing')]))).toEqual({ text: '/pricing', prefix: false });
    // A literal trailing `*` (escaped in the filter) is a whole path.
    expect(sessionPagesPath(settled([page('/sale*')]))).toEqual({ text: '/sale*', prefix: false });
  });

  it('reads it for page== one prefix no longer than page_key, the empty one too', () => {
    const blog = { text: '/blog/', prefix: true };
    expect(sessionPagesPath(settled([page('/blog/', { values: [blog] })]))).toEqual(blog);
    const all = { text: '', prefix: true };
    expect(sessionPagesPath(settled([page('', { values: [all] })]))).toEqual(all);
    const longest = { text: 'x'.repeat(STEP_KEY_CHARS), prefix: true };
    expect(pageOfCondition([page('', { values: [longest] })])).toEqual(longest);
    const longer = { text: 'x'.repeat(STEP_KEY_CHARS + 1), prefix: true };
    expect(pageOfCondition([page('', { values: [longer] })])).toBeUndefined();
  });

  it('reads the hits while a queued session has gained the path, or when that was not asked, and on the raw path', () => {
    expect(sessionPagesPath(settled([page('/pricing')], { pageRowsCurrent: false }))).toBeUndefined();
    expect(sessionPagesPath(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPagesPath(settled([page('/pricing')], { tables: 'raw' }))).toBeUndefined();
  });

  it('reads the hits for what a session could be counted under twice, or not at all', () => {
    const cases: StatsFilter[][] = [
      [
        page('/blog/', {
          values: [
            { text: '/blog/', prefix: true },
            { text: '/docs/', prefix: true },
          ],
        }),
      ],
      [
        page('/a', {
          values: [
            { text: '/a', prefix: false },
            { text: '/b', prefix: false },
          ],
        }),
      ],
      [page('/pricing', { operator: '!=' })],
      [page('/pricing'), page('/blog/')],
      [page('/pricing'), { dimension: 'entry_page', operator: '==', values: [{ text: '/', prefix: false }] }],
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
    expect(sessionPagesPath(settled([page(under)]))).toEqual({ text: under, prefix: false });
    expect(pageOfCondition([page('x'.repeat(STEP_KEY_CHARS))])).toBeUndefined();
    // Characters, not UTF-16 units: 254 emoji fit.
    expect(pageOfCondition([page('😀'.repeat(STEP_KEY_CHARS - 1))])?.text).toBe(
      '😀'.repeat(STEP_KEY_CHARS - 1),
    );
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
      text: '/pricing',
      prefix: false,
      endpoint: 'exit_path',
      attributes: [],
    });
    expect(pageRowsOfCondition([endpoint('entry_page', [whole('/')])])).toEqual({
      text: '/',
      prefix: false,
      endpoint: 'entry_path',
      attributes: [],
    });
    expect(pageRowsOfCondition([page('/pricing')])).toEqual({
      text: '/pricing',
      prefix: false,
      attributes: [],
    });
  });

  it('needs no check of the queue (it tests the session’s row, written with its rows), but not on the raw path', () => {
    const exit = [endpoint('exit_page', [whole('/pricing')])];
    expect(sessionPageRows(settled(exit, { pageRowsCurrent: undefined }))).toEqual({
      text: '/pricing',
      prefix: false,
      endpoint: 'exit_path',
      attributes: [],
    });
    expect(sessionPageRows(settled(exit, { tables: 'raw' }))).toBeUndefined();
    // page== still does.
    expect(sessionPageRows(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPageRows(settled([page('/pricing')]))).toEqual({
      text: '/pricing',
      prefix: false,
      attributes: [],
    });
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

  it('under a prefix, the row of each session whose prior page is not under it', () => {
    const { pages, sql: compiled } = text(
      settled([page('', { values: [{ text: '/blog/', prefix: true }] })]),
    );
    expect(pages).toBe(true);
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` >= ? AND `s`.`page_key` < ? AND SUBSTRING(`s`.`page_key`, 1, ?) = ? AND (`s`.`prior_page_key` IS NULL OR NOT (SUBSTRING(`s`.`prior_page_key`, 1, ?) = ?))) s',
    );
    expect(compiled.parameters).toEqual([7, '/blog/', '/blog0', 6, '/blog/', 6, '/blog/']);
    // The empty prefix: each session's first row.
    const all = text(settled([page('', { values: [{ text: '', prefix: true }] })])).sql;
    expect(all.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` IS NOT NULL AND (`s`.`prior_page_key` IS NULL OR NOT (`s`.`prior_page_key` IS NOT NULL))) s',
    );
  });

  it('under a prefix whose keys the request listed, each key (its range of starts)', () => {
    const blog = [page('', { values: [{ text: '/blog/', prefix: true }] })];
    const { sql: compiled } = text(settled(blog, { pageKeys: ['/blog/a', '/blog/b'] }));
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` IN (?, ?) AND (`s`.`prior_page_key` IS NULL OR NOT (SUBSTRING(`s`.`prior_page_key`, 1, ?) = ?))) s',
    );
    expect(compiled.parameters).toEqual([7, '/blog/a', '/blog/b', 6, '/blog/']);
    // None: no session.
    expect(text(settled(blog, { pageKeys: [] })).sql.sql).toContain(
      'WHERE `s`.`site_id` = ? AND (1 = 0) AND',
    );
    // A whole path ignores them.
    expect(text(settled([page('/pricing')], { pageKeys: ['/x'] })).sql.sql).toContain('`s`.`page_key` = ?)');
  });

  it('with conditions on attributes beside the page, tested on its rows', () => {
    const country: StatsFilter = {
      dimension: 'country',
      operator: '==',
      values: [{ text: 'DE', prefix: false }],
    };
    const device: StatsFilter = {
      dimension: 'device',
      operator: '!=',
      values: [{ text: 'mobile', prefix: false }],
    };
    const scope = settled([country, page('/pricing'), device]);
    expect(sessionPagesPath(scope)).toEqual({ text: '/pricing', prefix: false });
    expect(sessionPageRows(scope)?.attributes).toEqual([country, device]);
    const { pages, sql: compiled } = text(scope);
    expect(pages).toBe(true);
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` = ? AND ((`s`.`country` IN (?)) AND NOT (`s`.`device` IN (?)))) s',
    );
    expect(compiled.parameters).toEqual([7, '/pricing', 'DE', 'mobile']);
  });

  it('the sessions table otherwise', () => {
    const { pages, sql: compiled } = text(settled([page('/pricing')], { pageRowsCurrent: false }));
    expect(pages).toBe(false);
    expect(compiled.sql).toBe('SELECT 1 FROM sessions s');
  });
});
