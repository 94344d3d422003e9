import { headlineMetrics, metricChanges } from './overview.service';

describe(headlineMetrics.name, () => {
  it('derives rates and averages from the totals', () => {
    const metrics = headlineMetrics({
      sessions: 3,
      visitors: 2,
      bounces: 1,
      sessionPageviews: 7,
      pageviews: 6,
      durationSeconds: '100.500',
    });

    // 1 / 3 = 33.33 %; 7 / 3 = 2.333; 100.5 / 3 = 33.5.
    expect(metrics).toEqual({
      visitors: 2,
      sessions: 3,
      pageviews: 6,
      bounce_rate: 33.33,
      pages_per_session: 2.33,
      avg_session_duration_seconds: 33.5,
    });
  });

  it('gives zeros without sessions', () => {
    const metrics = headlineMetrics({
      sessions: 0,
      visitors: 0,
      bounces: 0,
      sessionPageviews: 0,
      pageviews: 4,
      durationSeconds: '0',
    });

    expect(metrics).toMatchObject({
      pageviews: 4,
      bounce_rate: 0,
      pages_per_session: 0,
      avg_session_duration_seconds: 0,
    });
  });
});

describe(metricChanges.name, () => {
  it('gives the % change of each metric and null where the previous value is 0', () => {
    const current = {
      visitors: 10,
      sessions: 12,
      pageviews: 30,
      bounce_rate: 25,
      pages_per_session: 2.5,
      avg_session_duration_seconds: 60,
    };
    const previous = {
      ...current,
      visitors: 8,
      sessions: 0,
      bounce_rate: 50,
      avg_session_duration_seconds: 90,
    };

    // (10 − 8) / 8 = 25 %; sessions had 0; (25 − 50) / 50 = −50 %; (60 − 90) / 90 = −33.33 %.
    expect(metricChanges(current, previous)).toEqual({
      visitors: 25,
      sessions: null,
      pageviews: 0,
      bounce_rate: -50,
      pages_per_session: 0,
      avg_session_duration_seconds: -33.33,
    });
  });
});
