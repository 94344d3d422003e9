import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { average, hitMatch, HitMatch, percentChange, STEP_KEY_CHARS } from './definitions';

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

describe(hitMatch.name, () => {
  const compile = (match: HitMatch) => {
    const q = sql`SELECT 1 FROM hits h WHERE ${hitMatch('h', match)}`.compile(mariadbDialect.builder);
    return { where: q.sql.slice(q.sql.indexOf('WHERE ') + 6), parameters: q.parameters };
  };
  const long = '/' + 'p'.repeat(STEP_KEY_CHARS + 20);

  it('matches an event by name through step_key', () => {
    expect(compile({ type: 'event', name: 'signup' })).toEqual({
      where: "(`h`.`type` = 'event' AND `h`.`step_key` = ?)",
      parameters: ['signup'],
    });
  });

  it('decides a path shorter than step_key by step_key alone', () => {
    expect(compile({ type: 'pageview', path: '/pricing' }).where).toBe(
      "(`h`.`type` = 'pageview' AND `h`.`step_key` = ?)",
    );
  });

  it('reads a prefix as the range of its strings plus the exact character test, never LIKE', () => {
    const { where, parameters } = compile({ type: 'path', path: '/blog_%/*' });
    expect(where).toBe(
      "(`h`.`type` = 'pageview' AND `h`.`step_key` >= ? AND `h`.`step_key` < ? AND SUBSTRING(`h`.`step_key`, 1, ?) = ?)",
    );
    expect(parameters).toEqual(['/blog_%/', '/blog_%0', 8, '/blog_%/']);
    expect(where).not.toMatch(/LIKE/);
  });

  it('moves the last character of a prefix one code point up, past the surrogates, or leaves the range open', () => {
    expect(compile({ type: 'path', path: '/a\uD7FF*' }).parameters[1]).toBe('/a\uE000');
    expect(compile({ type: 'path', path: '/a\u{10FFFF}*' }).where).toBe(
      "(`h`.`type` = 'pageview' AND `h`.`step_key` >= ? AND SUBSTRING(`h`.`step_key`, 1, ?) = ?)",
    );
  });

  it('narrows a path longer than step_key by its first 255 characters and compares the whole path', () => {
    const exact = compile({ type: 'pageview', path: long });
    expect(exact.where).toBe("(`h`.`type` = 'pageview' AND `h`.`step_key` = ? AND `h`.`path` = ?)");
    expect(exact.parameters).toEqual([long.slice(0, STEP_KEY_CHARS), long]);
    const prefix = compile({ type: 'pageview', path: `${long}*` });
    expect(prefix.where).toBe(
      "(`h`.`type` = 'pageview' AND `h`.`step_key` = ? AND SUBSTRING(`h`.`path`, 1, ?) = ?)",
    );
  });

  it('compares a path of exactly 255 characters in full, a prefix of 255 by step_key', () => {
    const edge = long.slice(0, STEP_KEY_CHARS);
    expect(compile({ type: 'pageview', path: edge }).where).toMatch(/`h`\.`path` = \?/);
    expect(compile({ type: 'pageview', path: `${edge}*` }).where).not.toMatch(/`path`/);
  });

  it('reads a lone * as every pageview with a path', () => {
    expect(compile({ type: 'pageview', path: '*' }).where).toBe(
      "(`h`.`type` = 'pageview' AND `h`.`step_key` IS NOT NULL)",
    );
  });
});
