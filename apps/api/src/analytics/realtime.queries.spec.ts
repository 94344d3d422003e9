import { ROLLUP_BUCKET_MS, TimeBound } from '@app/stats';
import fc from 'fast-check';
import { liveWindowParts } from './realtime.queries';

const QUARTER = ROLLUP_BUCKET_MS;
const within = (t: number, from: TimeBound, to: TimeBound) =>
  (from.inclusive ? t >= from.at.getTime() : t > from.at.getTime()) &&
  (to.inclusive ? t <= to.at.getTime() : t < to.at.getTime());

/** What liveWindowParts stands for: the quarter hours first…last, plus and minus its raw parts. */
function countByParts(stamps: number[], since: Date, until: Date): number {
  const parts = liveWindowParts(since, until);
  const bucket = (t: number) => Math.floor(t / QUARTER) * QUARTER;
  const rolledUp = stamps.filter(
    (t) => bucket(t) >= parts.first.getTime() && bucket(t) <= parts.last.getTime(),
  );
  return parts.raw.reduce(
    (n, part) => n + part.sign * stamps.filter((t) => within(t, part.from, part.to)).length,
    rolledUp.length,
  );
}

describe(liveWindowParts.name, () => {
  const at = (iso: string) => new Date(`2025-06-01T${iso}Z`);

  it('subtracts the first quarter hour before the window when the window holds half of it or more', () => {
    expect(liveWindowParts(at('12:07:30.000'), at('12:37:30.000'))).toEqual({
      first: at('12:00:00.000'),
      last: at('12:30:00.000'),
      raw: [
        {
          sign: -1,
          from: { at: at('12:00:00.000'), inclusive: true },
          to: { at: at('12:07:30.000'), inclusive: false },
        },
        {
          sign: -1,
          from: { at: at('12:37:30.000'), inclusive: false },
          to: { at: at('12:45:00.000'), inclusive: false },
        },
      ],
    });
  });

  it('reads the window part of its first quarter hour raw when the window holds less than half of it', () => {
    expect(liveWindowParts(at('12:07:30.001'), at('12:37:30.001'))).toEqual({
      first: at('12:15:00.000'),
      last: at('12:30:00.000'),
      raw: [
        {
          sign: 1,
          from: { at: at('12:07:30.001'), inclusive: true },
          to: { at: at('12:15:00.000'), inclusive: false },
        },
        {
          sign: -1,
          from: { at: at('12:37:30.001'), inclusive: false },
          to: { at: at('12:45:00.000'), inclusive: false },
        },
      ],
    });
  });

  it('needs no first part for a window starting on a quarter hour, and keeps a window inside one', () => {
    expect(liveWindowParts(at('12:15:00.000'), at('12:45:00.000')).raw).toEqual([
      {
        sign: -1,
        from: { at: at('12:45:00.000'), inclusive: false },
        to: { at: at('13:00:00.000'), inclusive: false },
      },
    ]);
    const inside = liveWindowParts(at('12:10:00.000'), at('12:12:00.000'));
    expect([inside.first, inside.last]).toEqual([at('12:00:00.000'), at('12:00:00.000')]);
    expect(inside.raw.map((part) => part.sign)).toEqual([-1, -1]);
  });

  it('counts exactly the hits stamped from since to until, both included, wherever they fall', () => {
    const day = at('00:00:00.000').getTime();
    const instant = fc.integer({ min: 0, max: 4 * 3600_000 }).map((ms) => day + ms);
    // Stamps often on a quarter hour or on the window's own ends: the cases an off-by-one would miss.
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 0, max: 3600_000 }),
        fc.array(
          fc.oneof(
            instant,
            instant.map((t) => Math.floor(t / QUARTER) * QUARTER),
          ),
          { maxLength: 40 },
        ),
        fc.boolean(),
        (start, length, stamps, onEnds) => {
          const since = new Date(start);
          const until = new Date(start + length);
          const all = onEnds ? [...stamps, since.getTime(), until.getTime()] : stamps;
          const expected = all.filter((t) => t >= since.getTime() && t <= until.getTime()).length;
          expect(countByParts(all, since, until)).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
