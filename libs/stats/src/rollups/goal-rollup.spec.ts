import { ANY_GOAL, conversionRollupDeltas, GoalSession } from './goal-rollup';
import { attributeKey } from './session-rollup';

const session = (id: string, at: string, goals: number[], country = 'DE'): GoalSession => ({
  session_id: id,
  started_at: new Date(at),
  channel: 'Search',
  source: 'google',
  country,
  device: 'desktop',
  browser: 'Firefox',
  goals,
});

describe('conversionRollupDeltas', () => {
  it('adds a converted session to its goals and to each of its attributes, by quarter hour of its start', () => {
    const { goals, converted } = conversionRollupDeltas([], [session('a', '2026-03-01T10:14:59Z', [3, 5])]);
    const bucket = new Date('2026-03-01T10:00:00Z');
    expect(goals).toEqual([
      { goalId: 3, bucket, sessions: 1 },
      { goalId: 5, bucket, sessions: 1 },
    ]);
    expect(converted).toEqual([
      { dimension: 'channel', bucket, value: 'Search', sessions: 1 },
      { dimension: 'source', bucket, value: 'google', sessions: 1 },
      { dimension: 'country', bucket, value: 'DE', sessions: 1 },
      { dimension: 'device', bucket, value: 'desktop', sessions: 1 },
      { dimension: 'browser', bucket, value: 'Firefox', sessions: 1 },
    ]);
  });

  it('leaves out sessions that converted nothing, and rows whose change nets to zero', () => {
    expect(
      conversionRollupDeltas(
        [session('a', '2026-03-01T10:00:00Z', [3]), session('b', '2026-03-01T10:05:00Z', [])],
        [session('a', '2026-03-01T10:10:00Z', [3]), session('b', '2026-03-01T10:05:00Z', [])],
      ),
    ).toEqual({ goals: [], converted: [], attributes: [] });
  });

  it('moves a session whose start, attribute and goals changed', () => {
    const { goals, converted } = conversionRollupDeltas(
      [session('a', '2026-03-01T10:20:00Z', [3], 'DE')],
      [session('a', '2026-03-01T09:50:00Z', [3, 4], 'FR')],
    );
    const was = new Date('2026-03-01T10:15:00Z');
    const now = new Date('2026-03-01T09:45:00Z');
    expect(goals).toEqual([
      { goalId: 3, bucket: was, sessions: -1 },
      { goalId: 3, bucket: now, sessions: 1 },
      { goalId: 4, bucket: now, sessions: 1 },
    ]);
    expect(converted.filter((d) => d.dimension === 'country')).toEqual([
      { dimension: 'country', bucket: was, value: 'DE', sessions: -1 },
      { dimension: 'country', bucket: now, value: 'FR', sessions: 1 },
    ]);
    expect(converted).toHaveLength(10);
  });

  it('counts a converted session once under any goal and once under each goal, by its five attributes', () => {
    const { attributes } = conversionRollupDeltas(
      [session('a', '2026-03-01T10:20:00Z', [3], 'DE'), session('b', '2026-03-01T10:25:00Z', [4], 'DE')],
      [session('a', '2026-03-01T09:50:00Z', [3, 4], 'FR'), session('b', '2026-03-01T10:25:00Z', [4], 'DE')],
    );
    const row = (goalId: number, at: string, country: string, sessions: number) => ({
      goalId,
      bucket: new Date(at),
      key: attributeKey(['Search', 'google', country, 'desktop', 'Firefox']),
      channel: 'Search',
      source: 'google',
      country,
      device: 'desktop',
      browser: 'Firefox',
      sessions,
    });
    // b did not change: its rows net to zero and are left out.
    expect(attributes).toEqual([
      row(ANY_GOAL, '2026-03-01T10:15:00Z', 'DE', -1),
      row(3, '2026-03-01T10:15:00Z', 'DE', -1),
      row(ANY_GOAL, '2026-03-01T09:45:00Z', 'FR', 1),
      row(3, '2026-03-01T09:45:00Z', 'FR', 1),
      row(4, '2026-03-01T09:45:00Z', 'FR', 1),
    ]);
  });

  it('takes a session out when it no longer converts any rolled-up goal', () => {
    const { goals, converted } = conversionRollupDeltas(
      [session('a', '2026-03-01T10:20:00Z', [3])],
      [session('a', '2026-03-01T10:20:00Z', [])],
    );
    expect(goals.map((d) => d.sessions)).toEqual([-1]);
    expect(converted.map((d) => d.sessions)).toEqual([-1, -1, -1, -1, -1]);
  });
});
