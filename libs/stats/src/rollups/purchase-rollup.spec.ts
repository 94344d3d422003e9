import { purchaseRollupDeltas } from './purchase-rollup';

const at = (iso: string) => new Date(iso);

describe('purchaseRollupDeltas', () => {
  it('moves a purchasing session from its old start bucket to its new one', () => {
    expect(
      purchaseRollupDeltas(
        [{ started_at: at('2026-03-01T10:20:00Z'), purchased: 1 }],
        [{ started_at: at('2026-03-01T09:59:59.999Z'), purchased: 1 }],
      ),
    ).toEqual([
      { bucket: at('2026-03-01T10:15:00Z'), sessions: -1 },
      { bucket: at('2026-03-01T09:45:00Z'), sessions: 1 },
    ]);
  });

  it('adds a session that gained an order, and nets out one that did not change', () => {
    expect(
      purchaseRollupDeltas(
        [
          { started_at: at('2026-03-01T10:00:00Z'), purchased: '0' },
          { started_at: at('2026-03-01T11:00:00Z'), purchased: '1' },
        ],
        [
          { started_at: at('2026-03-01T10:00:00Z'), purchased: '1' },
          { started_at: at('2026-03-01T11:05:00Z'), purchased: '1' },
        ],
      ),
    ).toEqual([{ bucket: at('2026-03-01T10:00:00Z'), sessions: 1 }]);
  });

  it('counts nothing for sessions without orders', () => {
    expect(purchaseRollupDeltas([], [{ started_at: at('2026-03-01T10:00:00Z'), purchased: 0 }])).toEqual([]);
  });
});
