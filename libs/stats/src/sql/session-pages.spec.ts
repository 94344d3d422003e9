import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { STEP_KEY_CHARS } from '../definitions';
import type { SessionScope, StatsFilter } from './session-filter';
import {
  coveringValues,
  pageRowsOfCondition,
  pagesOfCondition,
  sessionPageRows,
  sessionPagesPaths,
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
    expect(sessionPagesPaths(settled([page('/pricing')]))).toEqual([{ text: '/pricing', prefix: false }]);
    // A literal trailing `*` (escaped in the filter) is a whole path.
    expect(sessionPagesPaths(settled([page('/sale*')]))).toEqual([{ text: '/sale*', prefix: false }]);
  });

  it('reads it for page== one prefix no longer than page_key, the empty one too', () => {
    const blog = { text: '/blog/', prefix: true };
    expect(sessionPagesPaths(settled([page('/blog/', { values: [blog] })]))).toEqual([blog]);
    const all = { text: '', prefix: true };
    expect(sessionPagesPaths(settled([page('', { values: [all] })]))).toEqual([all]);
    const longest = { text: 'x'.repeat(STEP_KEY_CHARS), prefix: true };
    expect(pagesOfCondition([page('', { values: [longest] })])).toEqual([longest]);
    const longer = { text: 'x'.repeat(STEP_KEY_CHARS + 1), prefix: true };
    expect(pagesOfCondition([page('', { values: [longer] })])).toBeUndefined();
  });

  it('reads the hits while a queued session has gained the path, or when that was not asked, and on the raw path', () => {
    expect(sessionPagesPaths(settled([page('/pricing')], { pageRowsCurrent: false }))).toBeUndefined();
    expect(sessionPagesPaths(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPagesPaths(settled([page('/pricing')], { tables: 'raw' }))).toBeUndefined();
  });

  it('reads it for page== several values, each page_key tells apart, without those another covers', () => {
    const values = [
      { text: '/docs/', prefix: true },
      { text: '/pricing', prefix: false },
      { text: '/docs/a', prefix: false },
    ];
    expect(sessionPagesPaths(settled([page('', { values })]))).toEqual([values[0], values[1]]);
    const longer = { text: 'x'.repeat(STEP_KEY_CHARS), prefix: false };
    expect(pagesOfCondition([page('', { values: [values[1], longer] })])).toBeUndefined();
  });

  it('reads the hits for what it cannot tell: !=, a condition beside on anything but attributes, or none', () => {
    const cases: StatsFilter[][] = [
      [page('/pricing', { operator: '!=' })],
      [page('/pricing'), page('/blog/')],
      [page('/pricing'), { dimension: 'entry_page', operator: '==', values: [{ text: '/', prefix: false }] }],
      [{ dimension: 'entry_page', operator: '==', values: [{ text: '/pricing', prefix: false }] }],
      [],
    ];
    for (const filters of cases) {
      expect(pagesOfCondition(filters)).toBeUndefined();
      expect(sessionPagesPaths(settled(filters))).toBeUndefined();
    }
  });

  it('reads the hits for a path as long as page_key or longer, which its key does not tell apart', () => {
    const under = 'x'.repeat(STEP_KEY_CHARS - 1);
    expect(sessionPagesPaths(settled([page(under)]))).toEqual([{ text: under, prefix: false }]);
    expect(pagesOfCondition([page('x'.repeat(STEP_KEY_CHARS))])).toBeUndefined();
    // Characters, not UTF-16 units: 254 emoji fit.
    expect(pagesOfCondition([page('😀'.repeat(STEP_KEY_CHARS - 1))])?.[0].text).toBe(
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
      values: [whole('/pricing')],
      endpoint: 'exit_path',
      attributes: [],
    });
    expect(pageRowsOfCondition([endpoint('entry_page', [whole('/')])])).toEqual({
      values: [whole('/')],
      endpoint: 'entry_path',
      attributes: [],
    });
    expect(pageRowsOfCondition([page('/pricing')])).toEqual({
      values: [whole('/pricing')],
      attributes: [],
    });
  });

  it('needs no check of the queue (it tests the session’s row, written with its rows), but not on the raw path', () => {
    const exit = [endpoint('exit_page', [whole('/pricing')])];
    expect(sessionPageRows(settled(exit, { pageRowsCurrent: undefined }))).toEqual({
      values: [whole('/pricing')],
      endpoint: 'exit_path',
      attributes: [],
    });
    expect(sessionPageRows(settled(exit, { tables: 'raw' }))).toBeUndefined();
    // page== still does.
    expect(sessionPageRows(settled([page('/pricing')], { pageRowsCurrent: undefined }))).toBeUndefined();
    expect(sessionPageRows(settled([page('/pricing')]))).toEqual({
      values: [whole('/pricing')],
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

  it('selects each session once, by the row whose page is its entry (exit) page', () => {
    const scope = settled([endpoint('entry_page', [whole('/pricing')])]);
    const source = sessionsSource(scope, 's');
    expect(source.pages).toBe(true);
    const compiled = sql`SELECT 1 FROM ${source.raw}`.compile(mariadbDialect.builder);
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND `s`.`page_key` = ? AND `s`.`entry_path` = `s`.`page_key`) s',
    );
    expect(compiled.parameters).toEqual([7, '/pricing']);
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

  it('under several values, each session by its first row under the first value it has a row under, prefixes first', () => {
    const values = [
      { text: '/pricing', prefix: false },
      { text: '/blog/', prefix: true },
    ];
    const { pages, sql: compiled } = text(settled([page('', { values })]));
    expect(pages).toBe(true);
    // The prefix's rows as for one prefix; the path's rows of sessions with no row under the prefix.
    expect(compiled.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND ((`s`.`page_key` >= ? AND `s`.`page_key` < ? AND SUBSTRING(`s`.`page_key`, 1, ?) = ? AND (`s`.`prior_page_key` IS NULL OR NOT (SUBSTRING(`s`.`prior_page_key`, 1, ?) = ?))) OR (`s`.`page_key` = ? AND NOT EXISTS (SELECT 1 FROM session_pages s_e /*@index ix_session_pages_session*/ WHERE `s_e`.`site_id` = `s`.`site_id` AND `s_e`.`session_id` = `s`.`session_id` AND `s_e`.`page_key` >= ? AND `s_e`.`page_key` < ? AND SUBSTRING(`s_e`.`page_key`, 1, ?) = ?)))) s',
    );
    expect(compiled.parameters).toEqual([
      7,
      '/blog/',
      '/blog0',
      6,
      '/blog/',
      6,
      '/blog/',
      '/pricing',
      '/blog/',
      '/blog0',
      6,
      '/blog/',
    ]);
    // With the keys listed, each prefix reads its own among them.
    const docs = { text: '/docs/', prefix: true };
    const listed = text(
      settled([page('', { values: [...values, docs] })], { pageKeys: ['/blog/a', '/docs/x', '/pricing'] }),
    ).sql;
    expect(listed.sql).toBe(
      'SELECT 1 FROM (SELECT * FROM session_pages s WHERE `s`.`site_id` = ? AND ((`s`.`page_key` IN (?) AND (`s`.`prior_page_key` IS NULL OR NOT (SUBSTRING(`s`.`prior_page_key`, 1, ?) = ?))) OR (`s`.`page_key` IN (?) AND (`s`.`prior_page_key` IS NULL OR NOT (SUBSTRING(`s`.`prior_page_key`, 1, ?) = ?)) AND NOT EXISTS (SELECT 1 FROM session_pages s_e /*@index ix_session_pages_session*/ WHERE `s_e`.`site_id` = `s`.`site_id` AND `s_e`.`session_id` = `s`.`session_id` AND `s_e`.`page_key` >= ? AND `s_e`.`page_key` < ? AND SUBSTRING(`s_e`.`page_key`, 1, ?) = ?)) OR (`s`.`page_key` = ? AND NOT EXISTS (SELECT 1 FROM session_pages s_e /*@index ix_session_pages_session*/ WHERE `s_e`.`site_id` = `s`.`site_id` AND `s_e`.`session_id` = `s`.`session_id` AND ((`s_e`.`page_key` >= ? AND `s_e`.`page_key` < ? AND SUBSTRING(`s_e`.`page_key`, 1, ?) = ?) OR (`s_e`.`page_key` >= ? AND `s_e`.`page_key` < ? AND SUBSTRING(`s_e`.`page_key`, 1, ?) = ?)))))) s',
    );
    expect(listed.parameters.slice(0, 5)).toEqual([7, '/blog/a', 6, '/blog/', '/docs/x']);
    // A prefix none of the listed keys is under: none of its rows.
    const none = text(settled([page('', { values })], { pageKeys: ['/pricing'] })).sql.sql;
    expect(none).toContain('WHERE `s`.`site_id` = ? AND (((1 = 0) AND (`s`.`prior_page_key`');
    // A value another covers is left out: one prefix, read by its prior keys.
    const covered = [values[1], { text: '/blog/a', prefix: false }];
    expect(text(settled([page('', { values: covered })])).sql.sql).not.toContain('NOT EXISTS');
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
    expect(sessionPagesPaths(scope)).toEqual([{ text: '/pricing', prefix: false }]);
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

describe('coveringValues', () => {
  const whole = (text: string) => ({ text, prefix: false });
  const under = (text: string) => ({ text, prefix: true });

  it('leaves out what a prefix among them covers, and repeats, keeping the order of the rest', () => {
    expect(coveringValues([whole('/a'), under('/b'), whole('/b/c'), under('/b/d'), whole('/b')])).toEqual([
      whole('/a'),
      under('/b'),
    ]);
    expect(coveringValues([whole('/a'), whole('/a'), under('/x'), under('/x')])).toEqual([
      whole('/a'),
      under('/x'),
    ]);
    // The empty prefix covers every path; a whole path covers only itself.
    expect(coveringValues([whole('/a'), under(''), under('/b')])).toEqual([under('')]);
    expect(coveringValues([whole('/a'), under('/a'), whole('/ab')])).toEqual([under('/a')]);
    expect(coveringValues([whole('/a'), under('/ab')])).toEqual([whole('/a'), under('/ab')]);
  });
});
