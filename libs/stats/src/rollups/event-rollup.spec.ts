import { eventRollupDeltas, SessionEventBucket } from './event-rollup';

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
