import { HOUR_MS } from '@app/stats/rollups/visitor-sketch';
import { SketchedSession, sketchChanges } from './visitor-sketch-builder';

const HOUR = Date.parse('2026-03-08T06:00:00Z');

function session(id: string, at: number, over: Partial<SketchedSession> = {}): SketchedSession {
  return {
    session_id: id,
    visitor_id: `v-${id}`,
    started_at: new Date(at),
    channel: 'Direct',
    source: '',
    country: 'DE',
    device: 'desktop',
    browser: 'Firefox',
    ...over,
  };
}

describe('sketchChanges', () => {
  it('adds a new session to its hour and rebuilds nothing', () => {
    expect(sketchChanges([], [session('a', HOUR + 60_000)])).toEqual({ rebuild: [], added: [[HOUR, 'a']] });
  });

  it('changes nothing for a session that only grew in its hour', () => {
    const before = session('a', HOUR + 600_000);
    // A later hit, or an earlier one within the same hour: the same hour, visitor and values.
    const after = session('a', HOUR + 60_000);
    expect(sketchChanges([before], [after])).toEqual({ rebuild: [], added: [] });
  });

  it('rebuilds the hour a session left and adds it to the one it moved to', () => {
    const before = session('a', HOUR + 60_000);
    const after = session('a', HOUR - 60_000);
    expect(sketchChanges([before], [after])).toEqual({ rebuild: [HOUR], added: [[HOUR - HOUR_MS, 'a']] });
  });

  it.each([
    ['visitor', { visitor_id: 'other' }],
    ['channel', { channel: 'Organic Search' }],
    ['source', { source: 'google' }],
    ['country', { country: 'FR' }],
    ['device', { device: 'mobile' }],
    ['browser', { browser: 'Chrome' }],
  ])('rebuilds the hour of a session whose %s changed, and adds it nowhere else', (_, change) => {
    const before = session('a', HOUR + 60_000);
    const after = session('a', HOUR + 120_000, change);
    expect(sketchChanges([before], [after])).toEqual({ rebuild: [HOUR], added: [] });
  });

  it('rebuilds the hour of a session that is gone', () => {
    expect(sketchChanges([session('a', HOUR + 1)], [])).toEqual({ rebuild: [HOUR], added: [] });
  });

  it('adds no session to an hour it rebuilds, and each hour once', () => {
    const before = [session('a', HOUR + 1), session('b', HOUR + 2)];
    const after = [
      session('a', HOUR + 1, { country: 'FR' }),
      session('b', HOUR + 2, { device: 'tablet' }),
      session('c', HOUR + 3),
      session('d', HOUR + HOUR_MS),
    ];
    expect(sketchChanges(before, after)).toEqual({ rebuild: [HOUR], added: [[HOUR + HOUR_MS, 'd']] });
  });

  it('reads started_at as the driver gives it, a Date or text', () => {
    const before = session('a', HOUR + 1, { started_at: new Date(HOUR + 1).toISOString() });
    expect(sketchChanges([before], [session('a', HOUR + 5)])).toEqual({ rebuild: [], added: [] });
  });
});
