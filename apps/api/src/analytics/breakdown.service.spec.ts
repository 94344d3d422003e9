import { metricValue } from './breakdown.service';

describe(metricValue.name, () => {
  it('gives a rate metric as numerator over denominator in percent', () => {
    // 1 bounce of 3 sessions = 33.33 %.
    expect(metricValue('bounce_rate', { num: '1', den: '3' })).toBe(33.33);
    expect(metricValue('conv_rate', { num: '2', den: '8' })).toBe(25);
  });

  it('gives a rate of 0 over no sessions', () => {
    expect(metricValue('conv_rate', { num: '0', den: '0' })).toBe(0);
  });

  it('gives counts and money as the summed value, money from its exact decimal string', () => {
    expect(metricValue('sessions', { num: '42', den: '42' })).toBe(42);
    // MariaDB summed 0.1 + 0.2 exactly: "0.30", not 0.30000000000000004.
    expect(metricValue('revenue', { num: '0.30', den: '2' })).toBe(0.3);
    expect(metricValue('revenue', { num: '1234567.89', den: '5' })).toBe(1234567.89);
  });
});
