import { eventDayDeltas, eventRollupDeltas, pageEventRollupDeltas, SessionEventBucket } from './event-rollup';
import { localDayBucket } from './session-rollup';

const at = (hhmm: string) => new Date(`2026-03-01T${hhmm}:00Z`);
const row = (session_id: string, name: string, hhmm: string, hits: number): SessionEventBucket => ({
  session_id,
  name,
  bucket: at(hhmm),
  hits,
});

describe('eventRollupDeltas', () => {
  it('counts hits and one session per bucket, and links each session’s consecutive buckets', () => {
    const { rollups, links } = eventRollupDeltas(
      [],
      [
        row('a', 'play', '10:15', 2),
        row('a', 'play', '10:00', 1),
        row('a', 'play', '11:00', 3),
        row('b', 'play', '10:00', 1),
      ],
    );
    expect(rollups).toEqual([
      { bucket: at('10:00'), name: 'play', occurrences: 2, sessions: 2 },
      { bucket: at('10:15'), name: 'play', occurrences: 2, sessions: 1 },
      { bucket: at('11:00'), name: 'play', occurrences: 3, sessions: 1 },
    ]);
    // a: 10:00 → 10:15 → 11:00; b has one bucket, no link.
    expect(links).toEqual([
      { toBucket: at('10:15'), name: 'play', fromBucket: at('10:00'), sessions: 1 },
      { toBucket: at('11:00'), name: 'play', fromBucket: at('10:15'), sessions: 1 },
    ]);
  });

  it('keeps names apart: a session’s buckets are linked per name', () => {
    const { links } = eventRollupDeltas([], [row('a', 'play', '10:00', 1), row('a', 'share', '10:30', 1)]);
    expect(links).toEqual([]);
  });

  it('replaces a link when a late hit falls between two buckets, and nets unchanged rows out', () => {
    const before = [row('a', 'play', '10:00', 1), row('a', 'play', '11:00', 1)];
    const after = [row('a', 'play', '10:00', 1), row('a', 'play', '10:30', 1), row('a', 'play', '11:00', 1)];
    const { rollups, links } = eventRollupDeltas(before, after);
    expect(rollups).toEqual([{ bucket: at('10:30'), name: 'play', occurrences: 1, sessions: 1 }]);
    expect(links).toEqual([
      { toBucket: at('11:00'), name: 'play', fromBucket: at('10:00'), sessions: -1 },
      { toBucket: at('10:30'), name: 'play', fromBucket: at('10:00'), sessions: 1 },
      { toBucket: at('11:00'), name: 'play', fromBucket: at('10:30'), sessions: 1 },
    ]);
  });

  it('adds a late hit to a bucket the session already has: occurrences only', () => {
    const { rollups, links } = eventRollupDeltas(
      [row('a', 'play', '10:00', 1)],
      [row('a', 'play', '10:00', 3)],
    );
    expect(rollups).toEqual([{ bucket: at('10:00'), name: 'play', occurrences: 2, sessions: 0 }]);
    expect(links).toEqual([]);
  });
});

describe('eventDayDeltas', () => {
  // New York: the day of 2026-03-01 starts at 05:00 UTC.
  const dayOf = localDayBucket('America/New_York');
  const late = (hhmm: string) => new Date(`2026-03-02T${hhmm}:00Z`);

  it('counts a session once per site day and keeps only the links between two days', () => {
    const sessions = [
      // a: 03:00 (the day before in New York), 10:00, 10:15, 11:00, then 04:45 the next UTC day
      // (still 2026-03-01 in New York); b: 10:00 only.
      row('a', 'play', '03:00', 1),
      row('a', 'play', '10:00', 1),
      row('a', 'play', '10:15', 2),
      row('a', 'play', '11:00', 1),
      { session_id: 'a', name: 'play', bucket: late('04:45'), hits: 1 },
      row('b', 'play', '10:00', 1),
    ];
    const { rollups, links } = eventDayDeltas(eventRollupDeltas([], sessions), dayOf);
    expect(rollups).toEqual([
      { bucket: new Date('2026-02-28T05:00:00Z'), name: 'play', occurrences: 1, sessions: 1 },
      { bucket: new Date('2026-03-01T05:00:00Z'), name: 'play', occurrences: 6, sessions: 2 },
    ]);
    expect(links).toEqual([{ toBucket: at('10:00'), name: 'play', fromBucket: at('03:00'), sessions: 1 }]);
  });

  it('nets a day row out when a late hit only moves a session within its day', () => {
    const before = eventRollupDeltas([], [row('a', 'play', '10:00', 1)]);
    const after = eventRollupDeltas(
      [row('a', 'play', '10:00', 1)],
      [row('a', 'play', '10:00', 1), row('a', 'play', '12:00', 1)],
    );
    expect(eventDayDeltas(before, dayOf).rollups).toEqual([
      { bucket: new Date('2026-03-01T05:00:00Z'), name: 'play', occurrences: 1, sessions: 1 },
    ]);
    // The new bucket adds a session to its quarter hour and a link within the day: the day gains a hit only.
    expect(eventDayDeltas(after, dayOf)).toEqual({
      rollups: [{ bucket: new Date('2026-03-01T05:00:00Z'), name: 'play', occurrences: 1, sessions: 0 }],
      links: [],
    });
  });
});

describe('pageEventRollupDeltas', () => {
  const pages = (entries: Record<string, string[]>) => new Map(Object.entries(entries));

  it('counts a session’s buckets under each of its page keys, and nothing for a session without pageviews', () => {
    const { rollups, links } = pageEventRollupDeltas(
      [],
      [
        row('a', 'play', '10:00', 1),
        row('a', 'play', '10:15', 2),
        row('b', 'play', '10:00', 1),
        row('c', 'play', '10:00', 5),
      ],
      new Map(),
      pages({ a: ['/', '/pricing'], b: ['/pricing'] }),
    );
    const of = (pageKey: string) =>
      rollups.filter((r) => r.pageKey === pageKey).map(({ pageKey: _, ...r }) => r);
    expect(of('/')).toEqual([
      { bucket: at('10:00'), name: 'play', occurrences: 1, sessions: 1 },
      { bucket: at('10:15'), name: 'play', occurrences: 2, sessions: 1 },
    ]);
    expect(of('/pricing')).toEqual([
      { bucket: at('10:00'), name: 'play', occurrences: 2, sessions: 2 },
      { bucket: at('10:15'), name: 'play', occurrences: 2, sessions: 1 },
    ]);
    expect(rollups).toHaveLength(4);
    expect(links).toEqual(
      ['/', '/pricing'].map((pageKey) => ({
        toBucket: at('10:15'),
        name: 'play',
        fromBucket: at('10:00'),
        sessions: 1,
        pageKey,
      })),
    );
  });

  it('moves a session’s buckets to the page it gained, and leaves those it kept unchanged', () => {
    const before = [row('a', 'play', '10:00', 1)];
    const after = [row('a', 'play', '10:00', 1), row('a', 'play', '10:30', 1)];
    const { rollups, links } = pageEventRollupDeltas(
      before,
      after,
      pages({ a: ['/'] }),
      pages({ a: ['/', '/cart'] }),
    );
    expect(rollups).toEqual([
      { bucket: at('10:30'), name: 'play', occurrences: 1, sessions: 1, pageKey: '/' },
      { bucket: at('10:00'), name: 'play', occurrences: 1, sessions: 1, pageKey: '/cart' },
      { bucket: at('10:30'), name: 'play', occurrences: 1, sessions: 1, pageKey: '/cart' },
    ]);
    expect(links.map((l) => [l.pageKey, l.sessions])).toEqual([
      ['/', 1],
      ['/cart', 1],
    ]);
  });

  it('takes a session’s buckets away from a page it no longer has', () => {
    const buckets = [row('a', 'play', '10:00', 2)];
    const { rollups, links } = pageEventRollupDeltas(
      buckets,
      buckets,
      pages({ a: ['/old'] }),
      pages({ a: ['/new'] }),
    );
    expect(rollups).toEqual([
      { bucket: at('10:00'), name: 'play', occurrences: -2, sessions: -1, pageKey: '/old' },
      { bucket: at('10:00'), name: 'play', occurrences: 2, sessions: 1, pageKey: '/new' },
    ]);
    expect(links).toEqual([]);
  });
});
