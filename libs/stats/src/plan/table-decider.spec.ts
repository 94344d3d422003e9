import { resolveRange } from '../date-range';
import { STEP_KEY_CHARS } from '../definitions';
import { parseFilters } from '../query/filters';
import type { StatsQuery } from '../query/stats-query';
import { complementedPage } from '../sql/session-pages';
import {
  conversionRollupsMayAnswer,
  decideTable,
  decideVisitorCount,
  eventBucketsMayAnswer,
  orderRollupsMayAnswer,
  pageEventRollupsPage,
  sessionPagesComplement,
  storedConversionsMayAnswer,
  storedGoalsMayAnswer,
  visitorSketchesMayAnswer,
} from './table-decider';

const query = (filters: string): StatsQuery => ({
  site: { id: 1, timezone: 'Asia/Kathmandu', currency: 'EUR', trackingMode: 'full' },
  range: resolveRange({ from: '2026-03-01', to: '2026-03-31', siteTimezone: 'Asia/Kathmandu', maxDays: 731 }),
  filters: parseFilters(filters),
});
/** The same days in UTC: not whole days of the +05:45 site. */
const inUtcDays = (filters: string): StatsQuery => ({
  ...query(filters),
  range: resolveRange({
    from: '2026-03-01',
    to: '2026-03-31',
    timezone: 'UTC',
    siteTimezone: 'Asia/Kathmandu',
    maxDays: 731,
  }),
});
const sessions = { metrics: ['sessions', 'bounces'] as const };

describe('decideTable under filters', () => {
  it('reads the rollup of the one attribute every condition is on', () => {
    expect(decideTable(query('country==DE|F*;country!=FR'), 'sessions', sessions)).toEqual({
      source: 'sessions',
      kind: 'rollup',
      rollupTable: 'session_rollups',
      rollupDimension: 'country',
    });
    expect(decideTable(query('country==DE'), 'sessions', { ...sessions, dimension: 'country' }).kind).toBe(
      'rollup',
    );
  });

  it('reads the attribute rollup for conditions on several attributes, or grouped by another', () => {
    const combinations = { source: 'sessions', kind: 'rollup', rollupTable: 'session_attribute_rollups' };
    expect(decideTable(query('country==DE;device==mobile'), 'sessions', sessions)).toEqual(combinations);
    expect(decideTable(query('country==DE'), 'sessions', { ...sessions, dimension: 'channel' })).toEqual({
      ...combinations,
      rollupDimension: 'channel',
    });
  });

  it('reads the pair rollup for a list of another attribute or of pages under conditions on one attribute, over whole site days and in buckets of site days', () => {
    const pairs = {
      source: 'sessions',
      kind: 'rollup',
      rollupTable: 'session_pair_day_rollups',
      rollupDimension: 'country',
    };
    for (const dimension of ['channel', 'device', 'entry_path', 'exit_path'] as const) {
      expect(
        decideTable(query('country==DE|F*;country!=FR'), 'sessions', { metrics: ['sessions'], dimension }),
      ).toEqual(pairs);
    }
    // No browser rows (no report lists browsers under a filter); sessions only, by site day only.
    expect(
      decideTable(query('country==DE'), 'sessions', { metrics: ['sessions'], dimension: 'browser' }),
    ).toMatchObject({ rollupTable: 'session_attribute_rollups' });
    const channels = { metrics: ['sessions'] as const, dimension: 'channel' as const };
    expect(
      decideTable(query('country==DE'), 'sessions', { ...channels, metrics: ['sessions', 'bounces'] }),
    ).toMatchObject({ rollupTable: 'session_attribute_rollups' });
    expect(decideTable(query('country==DE;device==mobile'), 'sessions', channels)).toMatchObject({
      rollupTable: 'session_attribute_rollups',
    });
    expect(decideTable(query('channel==Direct'), 'sessions', channels)).toMatchObject({
      rollupTable: 'session_rollups',
    });
    expect(decideTable(inUtcDays('country==DE'), 'sessions', channels)).toMatchObject({
      rollupTable: 'session_attribute_rollups',
    });
    const buckets = resolveRange({
      from: '2026-03-01',
      to: '2026-03-02',
      siteTimezone: 'Asia/Kathmandu',
      maxDays: 731,
    });
    // Report buckets that start on site days (days, weeks, months) group day rows; hours do not.
    expect(
      decideTable(query('country==DE'), 'sessions', {
        ...channels,
        buckets: [{ startUtc: buckets.startUtc }] as never,
      }),
    ).toEqual(pairs);
    expect(
      decideTable(query('country==DE'), 'sessions', {
        ...channels,
        buckets: [
          { startUtc: buckets.startUtc },
          { startUtc: new Date(buckets.startUtc.getTime() + 3_600_000) },
        ] as never,
      }),
    ).toMatchObject({ rollupTable: 'session_attribute_rollups' });
  });

  it('reads raw rows for conditions on pages or goals, and for entry/exit lists under other filters', () => {
    for (const filters of [
      'country==DE;page==/a',
      'page==/a',
      'entry_page==/a',
      'exit_page!=/a',
      'goal==1',
    ]) {
      expect(decideTable(query(filters), 'sessions', sessions).kind).toBe('raw');
    }
    const entryList = { metrics: ['sessions'] as const, dimension: 'entry_path' as const };
    expect(decideTable(query('country==DE;device==mobile;page==/a'), 'sessions', entryList).kind).toBe('raw');
    expect(decideTable(query('entry_page==/a'), 'sessions', entryList).kind).toBe('raw');
    expect(decideTable(query('country==DE'), 'sessions', { ...entryList, dimension: 'exit_path' }).kind).toBe(
      'rollup',
    );
    expect(decideTable(query(''), 'sessions', entryList).kind).toBe('rollup');
  });

  it('reads the combination path rollup for entry and exit lists under conditions on several attributes, over whole site days', () => {
    const rows = { source: 'sessions', kind: 'rollup', rollupTable: 'session_combination_path_day_rollups' };
    for (const dimension of ['entry_path', 'exit_path'] as const) {
      expect(
        decideTable(query('country==DE;device!=mobile'), 'sessions', { metrics: ['sessions'], dimension }),
      ).toEqual(rows);
    }
    const entryList = { metrics: ['sessions'] as const, dimension: 'entry_path' as const };
    // Other metrics, report buckets, a range of UTC days in a +05:45 site, or another condition: not it.
    expect(
      decideTable(query('country==DE;device==mobile'), 'sessions', { ...entryList, metrics: ['bounces'] })
        .kind,
    ).toBe('raw');
    const { startUtc } = query('').range;
    expect(
      decideTable(query('country==DE;device==mobile'), 'sessions', {
        ...entryList,
        buckets: [{ startUtc }] as never,
      }),
    ).not.toMatchObject(rows);
    expect(decideTable(inUtcDays('country==DE;device==mobile'), 'sessions', entryList).kind).toBe('raw');
    expect(decideTable(query('country==DE;goal==1'), 'sessions', entryList).kind).toBe('raw');
    // One attribute: the pair rollup.
    expect(decideTable(query('country==DE'), 'sessions', entryList)).toMatchObject({
      rollupTable: 'session_pair_day_rollups',
    });
  });

  it('reads pageviews by one attribute, or filtered on it alone, from its rows of the pageview rollup', () => {
    const rows = (dimension: string) => ({
      source: 'hits',
      kind: 'rollup',
      rollupTable: 'pageview_rollups',
      rollupDimension: dimension,
    });
    expect(decideTable(query('country==DE|F*'), 'hits', { metrics: ['pageviews'] })).toEqual(rows('country'));
    expect(decideTable(query(''), 'hits', { metrics: ['pageviews'], dimension: 'device' })).toEqual(
      rows('device'),
    );
    expect(
      decideTable(query('device!=mobile'), 'hits', { metrics: ['pageviews'], dimension: 'device' }),
    ).toEqual(rows('device'));
    expect(decideTable(query(''), 'hits', { metrics: ['pageviews'] })).toEqual({
      source: 'hits',
      kind: 'rollup',
    });
  });

  it('reads other filtered pageviews through their sessions', () => {
    expect(decideTable(query('page==/a'), 'hits', { metrics: ['pageviews'] }).kind).toBe('bySession');
    expect(decideTable(query('country==DE;device==mobile'), 'hits', { metrics: ['pageviews'] }).kind).toBe(
      'bySession',
    );
    expect(
      decideTable(query('country==DE'), 'hits', { metrics: ['pageviews'], dimension: 'device' }).kind,
    ).toBe('bySession');
    // Time on page and scroll depth are not counted per session: read from the selected
    // sessions' hits, as are those of page conditions; grouped by an attribute, raw.
    expect(decideTable(query('country==DE'), 'hits', { metrics: ['pageviews', 'timeOnPageSum'] }).kind).toBe(
      'throughSessions',
    );
    expect(decideTable(query('page==/a'), 'hits', { metrics: ['timeOnPageSum', 'scrollDepth'] }).kind).toBe(
      'throughSessions',
    );
    expect(
      decideTable(query('country==DE'), 'hits', { metrics: ['timeOnPageSum'], dimension: 'device' }).kind,
    ).toBe('raw');
    expect(
      decideTable({ ...query('country==DE'), tables: 'raw' }, 'hits', { metrics: ['timeOnPageSum'] }).kind,
    ).toBe('raw');
    expect(
      decideTable({ ...query('country==DE'), tables: 'raw' }, 'hits', { metrics: ['pageviews'] }).kind,
    ).toBe('raw');
  });

  it('keeps the channel rows for unfiltered totals', () => {
    expect(decideTable(query(''), 'sessions', sessions).rollupDimension).toBe('channel');
  });

  it('counts new visitors from the visitors table only without filters and off the raw path', () => {
    expect(decideTable(query(''), 'visitors').kind).toBe('rollup');
    expect(decideTable(query('country==DE'), 'visitors').kind).toBe('raw');
    expect(decideTable({ ...query(''), tables: 'raw' }, 'visitors').kind).toBe('raw');
  });
});

describe('conversionRollupsMayAnswer', () => {
  it('answers unfiltered queries over whole quarter hours while the rollups hold the goals', () => {
    expect(conversionRollupsMayAnswer(query(''), true)).toBe(true);
  });

  it('leaves to the raw tables: goals not rolled up yet, filters, the raw path, ragged buckets', () => {
    expect(conversionRollupsMayAnswer(query(''), false)).toBe(false);
    expect(conversionRollupsMayAnswer(query('country==DE'), true)).toBe(false);
    expect(conversionRollupsMayAnswer({ ...query(''), tables: 'raw' }, true)).toBe(false);
    const q = query('');
    const ragged = [{ startUtc: new Date(q.range.startUtc.getTime() + 60_000) }];
    expect(conversionRollupsMayAnswer(q, true, ragged as never)).toBe(false);
  });
});

describe('storedGoalsMayAnswer', () => {
  /** The query's goal conditions with their goals resolved (StatsQueryParser does it). */
  const withGoals = (q: StatsQuery): StatsQuery => ({
    ...q,
    filters: q.filters.map((f) =>
      f.dimension === 'goal'
        ? {
            ...f,
            goals: f.values.map((v) => ({ id: Number(v.text), type: 'event' as const, matchValue: 'x' })),
          }
        : f,
    ),
  });

  it('answers conditions on goals only while the rollups hold the goals', () => {
    expect(storedGoalsMayAnswer(withGoals(query('goal==3')), true)).toBe(true);
    expect(storedGoalsMayAnswer(withGoals(query('goal==3|4;goal!=5')), true)).toBe(true);
    expect(storedGoalsMayAnswer(withGoals(query('goal!=3;goal!=4')), true)).toBe(true);
  });

  it('leaves to the raw tables: no filters, other dimensions, goals not rolled up, the raw path', () => {
    expect(storedGoalsMayAnswer(query(''), true)).toBe(false);
    expect(storedGoalsMayAnswer(withGoals(query('goal==3;country==DE')), true)).toBe(false);
    expect(storedGoalsMayAnswer(withGoals(query('goal==3')), false)).toBe(false);
    expect(storedGoalsMayAnswer({ ...withGoals(query('goal==3')), tables: 'raw' }, true)).toBe(false);
  });

  it('needs whole quarter hours for != only (the rest of the range comes from the unfiltered rollups)', () => {
    const ragged = (q: StatsQuery): StatsQuery => ({
      ...q,
      range: { ...q.range, startUtc: new Date(q.range.startUtc.getTime() + 60_000) },
    });
    expect(storedGoalsMayAnswer(ragged(withGoals(query('goal==3;goal!=4'))), true)).toBe(true);
    expect(storedGoalsMayAnswer(ragged(withGoals(query('goal!=3'))), true)).toBe(false);
  });
});

describe('storedConversionsMayAnswer', () => {
  it('counts the converted sessions of filtered queries from the stored goals while they are the goals', () => {
    expect(storedConversionsMayAnswer(query('country==DE'), true)).toBe(true);
    expect(storedConversionsMayAnswer(query('page==/pricing;device!=mobile'), true)).toBe(true);
  });

  it('leaves to the rollups or the raw tables: no filters, goals not rolled up, the raw path', () => {
    expect(storedConversionsMayAnswer(query(''), true)).toBe(false);
    expect(storedConversionsMayAnswer(query('country==DE'), false)).toBe(false);
    expect(storedConversionsMayAnswer({ ...query('country==DE'), tables: 'raw' }, true)).toBe(false);
  });
});

describe('order rollups', () => {
  const revenue = (dimension?: 'country' | 'device' | 'entry_path') => ({
    metrics: ['revenue'] as const,
    ...(dimension ? { dimension } : {}),
  });

  it('reads revenue by one attribute, unfiltered or filtered on it alone, from the revenue rollup', () => {
    const rows = {
      source: 'orders',
      kind: 'rollup',
      rollupTable: 'revenue_rollups',
      rollupDimension: 'country',
    };
    expect(decideTable(query(''), 'orders', revenue('country'))).toEqual(rows);
    expect(decideTable(query('country==DE|NP'), 'orders', revenue('country'))).toEqual(rows);
  });

  it('reads raw orders under other filters, without an attribute, and on the raw path', () => {
    expect(decideTable(query('device==mobile'), 'orders', revenue('country')).kind).toBe('raw');
    expect(decideTable(query('page==/a'), 'orders', revenue('country')).kind).toBe('raw');
    expect(decideTable(query(''), 'orders', revenue()).kind).toBe('raw');
    expect(decideTable(query(''), 'orders', revenue('entry_path')).kind).toBe('raw');
    expect(decideTable({ ...query(''), tables: 'raw' }, 'orders', revenue('country')).kind).toBe('raw');
  });

  it('answers e-commerce from the order rollups only unfiltered, off the raw path, over whole quarter hours', () => {
    expect(orderRollupsMayAnswer(query(''))).toBe(true);
    expect(orderRollupsMayAnswer(query('country==DE'))).toBe(false);
    expect(orderRollupsMayAnswer({ ...query(''), tables: 'raw' })).toBe(false);
    const q = query('');
    const ragged = [{ startUtc: new Date(q.range.startUtc.getTime() + 60_000) }];
    expect(orderRollupsMayAnswer(q, ragged as never)).toBe(false);
  });
});

describe('event buckets', () => {
  it("reads the selected sessions' event hits from their buckets over whole quarter hours, off the raw path", () => {
    expect(eventBucketsMayAnswer(query('page==/pricing'))).toBe(true);
    expect(eventBucketsMayAnswer(query(''))).toBe(true);
    expect(eventBucketsMayAnswer({ ...query('page==/pricing'), tables: 'raw' })).toBe(false);
    const q = query('country==DE');
    const ragged = { ...q.range, startUtc: new Date(q.range.startUtc.getTime() + 60_000) };
    expect(eventBucketsMayAnswer({ ...q, range: ragged })).toBe(false);
  });
});

describe('page event rollups', () => {
  const on = (path: string) => ({ path, without: false });
  it('count the events under page== or page!= one whole path alone, over whole quarter hours, off the raw path', () => {
    expect(pageEventRollupsPage(query('page==/pricing'))).toEqual(on('/pricing'));
    expect(pageEventRollupsPage(query('page==/50%\\*'))).toEqual(on('/50%*'));
    // page!= one path: the sessions page== leaves, each wholly in or out.
    expect(pageEventRollupsPage(query('page!=/pricing'))).toEqual({ path: '/pricing', without: true });
    expect(pageEventRollupsPage(query('page!=/pricing|/pricing'))).toEqual({
      path: '/pricing',
      without: true,
    });
    // A session counts under each of its paths: a prefix or several values would count it twice.
    expect(pageEventRollupsPage(query('page==/blog/*'))).toBeUndefined();
    expect(pageEventRollupsPage(query('page==/pricing|/about'))).toBeUndefined();
    expect(pageEventRollupsPage(query('page!=/blog/*'))).toBeUndefined();
    expect(pageEventRollupsPage(query('page!=/pricing|/about'))).toBeUndefined();
    // A path page_key does not tell apart: the keys keep its first STEP_KEY_CHARS characters.
    expect(pageEventRollupsPage(query(`page==/${'a'.repeat(STEP_KEY_CHARS)}`))).toBeUndefined();
    expect(pageEventRollupsPage(query(`page!=/${'a'.repeat(STEP_KEY_CHARS)}`))).toBeUndefined();
    expect(pageEventRollupsPage(query(`page==/${'a'.repeat(STEP_KEY_CHARS - 2)}`))).toEqual(
      on(`/${'a'.repeat(STEP_KEY_CHARS - 2)}`),
    );
    // The rows keep no session attribute, no entry or exit page, no goal.
    expect(pageEventRollupsPage(query('page==/pricing;country==DE'))).toBeUndefined();
    expect(pageEventRollupsPage(query('page!=/pricing;country==DE'))).toBeUndefined();
    expect(pageEventRollupsPage(query('page==/pricing;page!=/about'))).toBeUndefined();
    expect(pageEventRollupsPage(query('entry_page==/pricing'))).toBeUndefined();
    expect(pageEventRollupsPage(query('exit_page!=/pricing'))).toBeUndefined();
    expect(pageEventRollupsPage(query('country!=DE'))).toBeUndefined();
    expect(pageEventRollupsPage(query(''))).toBeUndefined();
    expect(pageEventRollupsPage({ ...query('page==/pricing'), tables: 'raw' })).toBeUndefined();
    expect(pageEventRollupsPage({ ...query('page!=/pricing'), tables: 'raw' })).toBeUndefined();
    const q = query('page!=/pricing');
    const ragged = { ...q.range, startUtc: new Date(q.range.startUtc.getTime() + 60_000) };
    expect(pageEventRollupsPage({ ...q, range: ragged })).toBeUndefined();
  });
});

describe('the session rollups less the page rows (sessionPagesComplement)', () => {
  const current = (filters: string): StatsQuery => ({ ...query(filters), pageRowsCurrent: true });
  it('answer session totals under page!= one whole path alone while its rows are current', () => {
    expect(sessionPagesComplement(current('page!=/pricing'), sessions)?.path).toBe('/pricing');
    expect(sessionPagesComplement(current('page!=/50%\\*'), sessions)?.path).toBe('/50%*');
    const parts = sessionPagesComplement(current('page!=/pricing|/pricing'), sessions);
    expect(parts?.site.filters).toEqual([]);
    expect(parts?.page.filters).toEqual(parseFilters('page==/pricing|/pricing'));
    expect(parts?.page.pageRowsCurrent).toBe(true);
    // The pageviews of the selected sessions: the site's pageview rollup less the path's.
    const pageviews = { metrics: ['timeOnPageSum', 'timedPageviews', 'scrollDepth'] as const };
    expect(sessionPagesComplement(current('page!=/pricing'), pageviews, 'hits')?.path).toBe('/pricing');
    expect(sessionPagesComplement(current('page!=/pricing'), pageviews)).toBeUndefined();
    const q = current('page!=/pricing');
    const ragged = { ...q.range, startUtc: new Date(q.range.startUtc.getTime() + 60_000) };
    expect(sessionPagesComplement({ ...q, range: ragged }, pageviews, 'hits')).toBeUndefined();
    // The overview's lists, by attribute or entry or exit page: the site's rollups less the path's rows.
    expect(sessionPagesComplement(q, { metrics: ['sessions'], dimension: 'entry_path' })?.path).toBe(
      '/pricing',
    );
    // A breakdown's sessions by attribute and report bucket: the session rollup's rows less the path's.
    const day = [{ label: '2026-03', startUtc: q.range.startUtc, endUtc: q.range.endUtc }];
    expect(
      sessionPagesComplement(q, { ...sessions, dimension: 'country', buckets: day })?.site.filters,
    ).toEqual([]);
    expect(
      sessionPagesComplement({ ...q, range: ragged }, { ...sessions, dimension: 'country' }),
    ).toBeUndefined();
    expect(complementedPage(parseFilters('page!=/pricing'))).toEqual([{ text: '/pricing', prefix: false }]);
    // The rows of a queued session that gained the path, or of none checked: the hits are tested.
    expect(
      sessionPagesComplement({ ...current('page!=/pricing'), pageRowsCurrent: false }, sessions),
    ).toBeUndefined();
    expect(sessionPagesComplement(query('page!=/pricing'), sessions)).toBeUndefined();
  });

  it('leave everything else to the raw tables or to the other forms', () => {
    // Visitors are distinct: the path's do not subtract from the site's.
    expect(
      sessionPagesComplement(current('page!=/pricing'), { metrics: ['sessions', 'visitors'] }),
    ).toBeUndefined();
    // Pageviews by value or bucket: totals only.
    const q = current('page!=/pricing');
    const day = [{ label: '2026-03', startUtc: q.range.startUtc, endUtc: q.range.endUtc }];
    expect(
      sessionPagesComplement(q, { metrics: ['pageviews'], dimension: 'country' }, 'hits'),
    ).toBeUndefined();
    expect(sessionPagesComplement(q, { metrics: ['pageviews'], buckets: day }, 'hits')).toBeUndefined();
    // page== reads the rows themselves; a prefix or several values, another condition beside.
    for (const filters of [
      'page==/pricing',
      'page!=/blog/*',
      'page!=/pricing|/about',
      'page!=/pricing;country==DE',
      'entry_page!=/pricing',
      `page!=/${'a'.repeat(STEP_KEY_CHARS)}`,
    ]) {
      expect({ filters, path: sessionPagesComplement(current(filters), sessions) }).toEqual({
        filters,
        path: undefined,
      });
    }
    expect(complementedPage(parseFilters('page!=/pricing;country==DE'))).toBeUndefined();
    expect(complementedPage(parseFilters('page!=/blog/*'))).toBeUndefined();
    expect(sessionPagesComplement({ ...current('page!=/pricing'), tables: 'raw' }, sessions)).toBeUndefined();
    // The site's rollups answer whole quarter hours only.
    const ragged = { ...q.range, startUtc: new Date(q.range.startUtc.getTime() + 60_000) };
    expect(sessionPagesComplement({ ...q, range: ragged }, sessions)).toBeUndefined();
  });
});

describe('visitor sketches', () => {
  it('may count visitors unfiltered or under filters on one session attribute, over more than one day', () => {
    for (const filters of ['', 'country==DE', 'country==D*|FR;country!=DK', 'channel!=(direct)']) {
      expect(visitorSketchesMayAnswer(query(filters))).toBe(true);
    }
  });

  it('leaves to the sessions filters on two attributes, pages, goals, the raw path and a single day', () => {
    for (const filters of ['country==DE;device==mobile', 'page==/a', 'entry_page==/a', 'goal==1']) {
      expect(visitorSketchesMayAnswer(query(filters))).toBe(false);
    }
    expect(visitorSketchesMayAnswer({ ...query(''), tables: 'raw' })).toBe(false);
    const day = resolveRange({ from: '2026-03-01', to: '2026-03-01', siteTimezone: 'UTC', maxDays: 731 });
    expect(visitorSketchesMayAnswer({ ...query('country==DE'), range: day })).toBe(false);
  });

  it('counts exactly up to the limit of sessions an exact count reads, from the sketches above it', () => {
    expect(decideVisitorCount(query('country==DE'), 50_000, 50_000)).toBe('exact');
    expect(decideVisitorCount(query('country==DE'), 50_001, 50_000)).toBe('sketch');
    expect(decideVisitorCount(query('country==DE;device==mobile'), 50_001, 50_000)).toBe('exact');
  });
});
