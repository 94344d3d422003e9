import { earliestStarts, VisitorSession } from './first-sessions';

const s = (session_id: string, visitor_id: string, at: string): VisitorSession => ({
  session_id,
  visitor_id,
  started_at: new Date(at),
});

describe('earliestStarts', () => {
  it('gives each visitor the earliest start of its new or grown sessions', () => {
    const before = [s('a', 'v1', '2026-03-01T10:00:00Z')];
    const after = [
      s('a', 'v1', '2026-03-01T09:59:00Z'), // a late hit made it start earlier
      s('b', 'v1', '2026-03-01T11:00:00Z'),
      s('c', 'v2', '2026-03-01T12:00:00Z'),
      s('d', 'v2', '2026-03-01T11:30:00Z'),
    ];
    expect(earliestStarts(before, after)).toEqual(
      new Map([
        ['v1', Date.parse('2026-03-01T09:59:00Z')],
        ['v2', Date.parse('2026-03-01T11:30:00Z')],
      ]),
    );
  });

  it('takes a session that only grew at its end as it was', () => {
    const at = '2026-03-01T10:00:00Z';
    expect(earliestStarts([s('a', 'v1', at)], [s('a', 'v1', at)])).toEqual(new Map([['v1', Date.parse(at)]]));
  });

  it('gives up when a session started later, changed its visitor or is gone', () => {
    const before = [s('a', 'v1', '2026-03-01T10:00:00Z')];
    expect(earliestStarts(before, [s('a', 'v1', '2026-03-01T10:00:00.001Z')])).toBeUndefined();
    expect(earliestStarts(before, [s('a', 'v2', '2026-03-01T09:00:00Z')])).toBeUndefined();
    expect(earliestStarts(before, [s('b', 'v1', '2026-03-01T09:00:00Z')])).toBeUndefined();
  });

  it('reads a start given as the stored text', () => {
    expect(
      earliestStarts([], [{ session_id: 'a', visitor_id: 'v1', started_at: '2026-03-01T10:00:00.000Z' }]),
    ).toEqual(new Map([['v1', Date.parse('2026-03-01T10:00:00Z')]]));
  });
});
