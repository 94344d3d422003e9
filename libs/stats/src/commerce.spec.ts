import { mariadbDialect } from '@app/db/dialect';
import { averageOrderValue, centsToNumber, money, toCents } from './commerce';
import { resolveRange } from './date-range';
import { StatsQuery } from './query/stats-query';
import { where } from './sql/where';

describe(toCents.name, () => {
  it('reads DECIMAL strings with 0, 1 or 2 decimals exactly', () => {
    expect(toCents('100.00')).toBe(10000n);
    expect(toCents('0.1')).toBe(10n);
    expect(toCents('7')).toBe(700n);
    expect(toCents('12345678901234567.89')).toBe(1234567890123456789n);
  });

  it('reads NULL, the SUM of no rows, as 0', () => {
    expect(toCents(null)).toBe(0n);
  });

  it('refuses what is not a money amount', () => {
    expect(() => toCents('1.234')).toThrow('not a money amount');
    expect(() => toCents('-1.00')).toThrow('not a money amount');
  });
});

describe(centsToNumber.name, () => {
  it('gives the number with those two decimals', () => {
    expect(centsToNumber(10000n)).toBe(100);
    expect(centsToNumber(10n)).toBe(0.1);
    expect(centsToNumber(5n)).toBe(0.05);
  });
});

describe(money.name, () => {
  it('turns the DECIMAL sum of 1,000 × 0.10 into exactly 100', () => {
    // In floats, adding 0.1 a thousand times gives 99.9999999999986; SQL sums DECIMALs exactly.
    expect(money('100.00')).toBe(100);
  });
});

describe(averageOrderValue.name, () => {
  it('is 0 without orders', () => {
    expect(averageOrderValue('0.00', 0)).toBe(0);
  });

  it('divides exactly: 100.00 over 1,000 orders is 0.10', () => {
    expect(averageOrderValue('100.00', 1000)).toBe(0.1);
  });

  it('rounds half up to the cent', () => {
    // 0.05 / 2 = 0.025 → 0.03; 10.00 / 3 = 3.333… → 3.33; 20.00 / 3 = 6.666… → 6.67.
    expect(averageOrderValue('0.05', 2)).toBe(0.03);
    expect(averageOrderValue('10.00', 3)).toBe(3.33);
    expect(averageOrderValue('20.00', 3)).toBe(6.67);
  });

  it('does not round twice as a 6-decimal SQL quotient would', () => {
    // 100.00 / 20001 = 0.0049997500… → 0.00; rounded first to 6 decimals (0.005000) it would become 0.01.
    expect(averageOrderValue('100.00', 20001)).toBe(0);
  });
});

describe('where.orders', () => {
  it('bounds the order ts by the range instants, start inclusive and end exclusive', () => {
    const range = resolveRange({
      from: '2026-03-01',
      to: '2026-03-02',
      siteTimezone: 'Europe/Berlin',
      maxDays: 731,
    });
    const query: StatsQuery = {
      site: { id: 7, timezone: 'Europe/Berlin', currency: 'EUR', trackingMode: 'full' },
      range,
      filters: [],
    };
    const compiled = mariadbDialect.builder
      .selectFrom('orders as o')
      .selectAll()
      .where(where.orders(query, 'o'))
      .compile();
    expect(compiled.sql).toContain('(`o`.`site_id` = ? AND `o`.`ts` >= ? AND `o`.`ts` < ?)');
    // Berlin is UTC+1 in March before the 29th: 2026-03-01 00:00 local is 2026-02-28T23:00Z.
    expect(compiled.parameters).toEqual([
      7,
      new Date('2026-02-28T23:00:00Z'),
      new Date('2026-03-02T23:00:00Z'),
    ]);
  });
});
