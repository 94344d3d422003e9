import { average, percentChange } from './definitions';

describe(percentChange.name, () => {
  it('gives the relative change in percent, rounded to 2 decimals', () => {
    // (12 - 8) / 8 = 0.5 → 50 %; (2 - 3) / 3 = -0.33333 → -33.33 %.
    expect(percentChange(12, 8)).toBe(50);
    expect(percentChange(2, 3)).toBe(-33.33);
  });

  it('is null when the previous value is 0, even if the current one is 0 too', () => {
    expect(percentChange(5, 0)).toBeNull();
    expect(percentChange(0, 0)).toBeNull();
  });

  it('is -100 when the current value dropped to 0', () => {
    expect(percentChange(0, 7)).toBe(-100);
  });
});

describe(average.name, () => {
  it('divides a decimal string sum and rounds to 2 decimals', () => {
    // 100.005 / 3 = 33.335 → 33.34 (round half up after the epsilon nudge).
    expect(average('100.005', 3)).toBe(33.34);
    expect(average(10, 4)).toBe(2.5);
  });

  it('is 0 over no items', () => {
    expect(average('0', 0)).toBe(0);
  });
});
