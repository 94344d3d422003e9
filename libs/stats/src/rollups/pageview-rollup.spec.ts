import { pageviewRollupDeltas } from './pageview-rollup';

const at = (hhmm: string) => new Date(`2026-03-01T${hhmm}:00Z`);
const attrs = (session_id: string, country: string) => ({
  session_id,
  channel: 'Search',
  source: 'google',
  country,
  device: 'desktop',
  browser: 'Firefox',
});

describe('pageviewRollupDeltas', () => {
  it('adds each bucket’s pageviews under every attribute of the session', () => {
    const deltas = pageviewRollupDeltas(
      { buckets: [], sessions: [] },
      { buckets: [{ session_id: 'a', bucket: at('10:00'), pageviews: 3 }], sessions: [attrs('a', 'DE')] },
    );
    expect(deltas.map((d) => `${d.dimension}=${d.value} ${d.pageviews}`)).toEqual([
      'channel=Search 3',
      'source=google 3',
      'country=DE 3',
      'device=desktop 3',
      'browser=Firefox 3',
    ]);
  });

  it('moves pageviews to the new attribute and nets what did not change', () => {
    const deltas = pageviewRollupDeltas(
      { buckets: [{ session_id: 'a', bucket: at('10:00'), pageviews: 2 }], sessions: [attrs('a', 'DE')] },
      {
        buckets: [
          { session_id: 'a', bucket: at('09:45'), pageviews: 1 },
          { session_id: 'a', bucket: at('10:00'), pageviews: 2 },
        ],
        sessions: [attrs('a', 'FR')],
      },
    );
    const country = deltas.filter((d) => d.dimension === 'country');
    expect(country).toEqual([
      { dimension: 'country', bucket: at('10:00'), value: 'DE', pageviews: -2 },
      { dimension: 'country', bucket: at('09:45'), value: 'FR', pageviews: 1 },
      { dimension: 'country', bucket: at('10:00'), value: 'FR', pageviews: 2 },
    ]);
    // The other attributes did not change: only the new bucket's pageview.
    expect(deltas.filter((d) => d.dimension === 'device')).toEqual([
      { dimension: 'device', bucket: at('09:45'), value: 'desktop', pageviews: 1 },
    ]);
  });

  it('counts no bucket of a session without a derived row', () => {
    expect(
      pageviewRollupDeltas(
        { buckets: [], sessions: [] },
        { buckets: [{ session_id: 'b', bucket: at('10:00'), pageviews: 1 }], sessions: [] },
      ),
    ).toEqual([]);
  });
});
