import { resolveRange } from '../date-range';
import { parseFilters } from '../query/filters';
import type { StatsQuery } from '../query/stats-query';
import { decideTable } from './table-decider';

const query = (filters: string): StatsQuery => ({
  site: { id: 1, timezone: 'Asia/Kathmandu', currency: 'EUR', trackingMode: 'full' },
  range: resolveRange({ from: '2026-03-01', to: '2026-03-31', siteTimezone: 'Asia/Kathmandu', maxDays: 731 }),
  filters: parseFilters(filters),
});
const sessions = { metrics: ['sessions', 'bounces'] as const };

describe('decideTable under filters', () => {
  it('reads the rollup of the one attribute every condition is on', () => {
    expect(decideTable(query('country==DE|F*;country!=FR'), 'sessions', sessions)).toEqual({
      source: 'sessions',
      kind: 'rollup',
      rollupDimension: 'country',
    });
    expect(decideTable(query('country==DE'), 'sessions', { ...sessions, dimension: 'country' }).kind).toBe(
      'rollup',
    );
  });

  it('reads raw rows when the statement groups by another attribute', () => {
    expect(decideTable(query('country==DE'), 'sessions', { ...sessions, dimension: 'channel' }).kind).toBe(
      'raw',
    );
    expect(
      decideTable(query('country==DE'), 'sessions', { metrics: ['sessions'], dimension: 'entry_path' }).kind,
    ).toBe('raw');
  });

  it('reads raw rows for conditions on two attributes, on pages or on goals', () => {
    for (const filters of [
      'country==DE;device==mobile',
      'page==/a',
      'entry_page==/a',
      'exit_page!=/a',
      'goal==1',
    ]) {
      expect(decideTable(query(filters), 'sessions', sessions).kind).toBe('raw');
    }
  });

  it('never reads the pageview rollup under a filter: it keeps no session attribute', () => {
    expect(decideTable(query('country==DE'), 'hits', { metrics: ['pageviews'] }).kind).toBe('raw');
    expect(decideTable(query(''), 'hits', { metrics: ['pageviews'] }).kind).toBe('rollup');
  });

  it('keeps the channel rows for unfiltered totals', () => {
    expect(decideTable(query(''), 'sessions', sessions).rollupDimension).toBe('channel');
  });
});
