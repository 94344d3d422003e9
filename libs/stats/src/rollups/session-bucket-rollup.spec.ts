import { localDayBucket } from './session-rollup';
import { attributeRow, byDay, SessionBucket, sessionBucketRollupDeltas } from './session-bucket-rollup';

const at = (hhmm: string) => new Date(`2026-03-01T${hhmm}:00Z`);
const attrs = (session_id: string, country: string) => ({
  session_id,
  channel: 'Search',
  source: 'google',
  country,
  device: 'desktop',
  browser: 'Firefox',
});
/** A bucket with two sums, e.g. orders and revenue in cents. */
const bucket = (session_id: string, hhmm: string, ...sums: number[]): SessionBucket => ({
  session_id,
  bucket: at(hhmm),
  sums: sums.map(BigInt),
});

describe('sessionBucketRollupDeltas', () => {
  it('adds each bucket’s sums under every attribute of the session', () => {
    const deltas = sessionBucketRollupDeltas(
      { buckets: [], sessions: [] },
      { buckets: [bucket('a', '10:00', 3, 1250)], sessions: [attrs('a', 'DE')] },
    );
    expect(deltas.map((d) => `${d.dimension}=${d.value} ${d.sums.join(' ')}`)).toEqual([
      'channel=Search 3 1250',
      'source=google 3 1250',
      'country=DE 3 1250',
      'device=desktop 3 1250',
      'browser=Firefox 3 1250',
    ]);
  });

  it('moves the sums to the new attribute and nets what did not change', () => {
    const deltas = sessionBucketRollupDeltas(
      { buckets: [bucket('a', '10:00', 2, 500)], sessions: [attrs('a', 'DE')] },
      {
        buckets: [bucket('a', '09:45', 1, 99), bucket('a', '10:00', 2, 500)],
        sessions: [attrs('a', 'FR')],
      },
    );
    expect(deltas.filter((d) => d.dimension === 'country')).toEqual([
      { dimension: 'country', bucket: at('10:00'), value: 'DE', sums: [-2n, -500n] },
      { dimension: 'country', bucket: at('09:45'), value: 'FR', sums: [1n, 99n] },
      { dimension: 'country', bucket: at('10:00'), value: 'FR', sums: [2n, 500n] },
    ]);
    // The other attributes did not change: only the new bucket's row.
    expect(deltas.filter((d) => d.dimension === 'device')).toEqual([
      { dimension: 'device', bucket: at('09:45'), value: 'desktop', sums: [1n, 99n] },
    ]);
  });

  it('keeps a row whose count nets to zero while another sum does not', () => {
    const deltas = sessionBucketRollupDeltas(
      { buckets: [bucket('a', '10:00', 1, 500)], sessions: [attrs('a', 'DE')] },
      { buckets: [bucket('a', '10:00', 1, 700)], sessions: [attrs('a', 'DE')] },
    );
    expect(deltas.filter((d) => d.dimension === 'country')).toEqual([
      { dimension: 'country', bucket: at('10:00'), value: 'DE', sums: [0n, 200n] },
    ]);
  });

  it('counts no bucket of a session without a derived row', () => {
    expect(
      sessionBucketRollupDeltas(
        { buckets: [], sessions: [] },
        { buckets: [bucket('b', '10:00', 1, 1)], sessions: [] },
      ),
    ).toEqual([]);
  });
});

describe('byDay', () => {
  it('adds the 15-minute changes of a site day into one, and drops the days they cancel out in', () => {
    const dayOf = localDayBucket('America/New_York');
    const change = (bucket: string, value: string, ...sums: bigint[]) => ({
      dimension: 'country' as const,
      bucket: new Date(bucket),
      value,
      sums,
    });
    expect(
      byDay(
        [
          // 2026-03-01 in New York: from 05:00 UTC to 05:00 UTC the next day.
          change('2026-03-01T05:00:00Z', 'DE', 2n, 150n),
          change('2026-03-02T04:45:00Z', 'DE', 1n, 25n),
          change('2026-03-02T05:00:00Z', 'DE', 1n, 1n),
          change('2026-03-01T12:00:00Z', 'FR', 1n, 10n),
          change('2026-03-01T13:00:00Z', 'FR', -1n, -10n),
        ],
        dayOf,
        attributeRow,
      ),
    ).toEqual([change('2026-03-01T05:00:00Z', 'DE', 3n, 175n), change('2026-03-02T05:00:00Z', 'DE', 1n, 1n)]);
  });

  it("keeps the rows the identity tells apart: a goal's changes by Kathmandu day (+05:45)", () => {
    const change = (goalId: number, bucket: string, sessions: bigint) => ({
      goalId,
      bucket: new Date(bucket),
      sums: [sessions],
    });
    expect(
      byDay(
        [
          // 2026-03-01 in Kathmandu: from 2026-02-28T18:15Z to 2026-03-01T18:15Z.
          change(3, '2026-02-28T18:15:00Z', 2n),
          change(3, '2026-03-01T18:00:00Z', 1n),
          change(5, '2026-03-01T10:00:00Z', 1n),
          change(3, '2026-03-01T18:15:00Z', 4n),
          change(5, '2026-03-01T11:00:00Z', -1n),
          change(3, '2026-02-28T18:00:00Z', -1n),
        ],
        localDayBucket('Asia/Kathmandu'),
        (d) => String(d.goalId),
      ),
    ).toEqual([
      change(3, '2026-02-28T18:15:00Z', 3n),
      change(3, '2026-03-01T18:15:00Z', 4n),
      change(3, '2026-02-27T18:15:00Z', -1n),
    ]);
  });
});
