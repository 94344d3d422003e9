import { funnelData } from './funnel.service';
import type { FunnelStep } from './funnel-steps';

const STEPS: FunnelStep[] = [
  { type: 'pageview', path: '/pricing' },
  { type: 'event', name: 'signup' },
  { type: 'pageview', path: '/thank-you' },
];

describe(funnelData.name, () => {
  it('rates every step against step 1 and drop-off against the step before', () => {
    const data = funnelData(STEPS, [8, 6, 3], 24);

    expect(data).toEqual({
      window_hours: 24,
      steps: [
        {
          step: 1,
          type: 'pageview',
          path: '/pricing',
          visitors: 8,
          conversion_rate: 100,
          drop_off: 0,
          drop_off_rate: 0,
        },
        // 6 / 8 = 75 %; 8 − 6 = 2 dropped, 2 / 8 = 25 %.
        {
          step: 2,
          type: 'event',
          name: 'signup',
          visitors: 6,
          conversion_rate: 75,
          drop_off: 2,
          drop_off_rate: 25,
        },
        // 3 / 8 = 37.5 %; 6 − 3 = 3 dropped, 3 / 6 = 50 %.
        {
          step: 3,
          type: 'pageview',
          path: '/thank-you',
          visitors: 3,
          conversion_rate: 37.5,
          drop_off: 3,
          drop_off_rate: 50,
        },
      ],
      completed_visitors: 3,
      conversion_rate: 37.5,
    });
  });

  it('gives zero rates when nobody entered', () => {
    const data = funnelData(STEPS, [0, 0, 0], 1);

    expect(data.conversion_rate).toBe(0);
    expect(data.steps.map((s) => [s.conversion_rate, s.drop_off, s.drop_off_rate])).toEqual([
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('completes at step 1 for a one-step funnel', () => {
    expect(funnelData([STEPS[1]], [4], 24)).toMatchObject({ completed_visitors: 4, conversion_rate: 100 });
  });
});
