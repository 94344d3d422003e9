import {
  CompiledQuery,
  DummyDriver,
  Kysely,
  MysqlAdapter,
  MysqlIntrospector,
  MysqlQueryCompiler,
  sql,
} from 'kysely';
import { ParameterError } from '../parameter-error';
import { rollupValueSelected, sessionSelected, StatsFilter } from '../sql/session-filter';
import { FILTER_LIMITS, filtersMeta, formatFilterValue, parseFilters, soleAttributeOf } from './filters';

const v = (text: string, prefix = false) => ({ text, prefix });

function rejection(parameter: string): string {
  try {
    parseFilters(parameter);
  } catch (e) {
    expect(e).toBeInstanceOf(ParameterError);
    expect((e as ParameterError).parameter).toBe('filters');
    return (e as Error).message;
  }
  throw new Error(`"${parameter}" was accepted`);
}

describe('parseFilters', () => {
  it('reads nothing as no filter', () => {
    expect(parseFilters(undefined)).toEqual([]);
    expect(parseFilters('')).toEqual([]);
  });

  it('reads the example of SPEC §3', () => {
    expect(parseFilters('country==DE|FR;source!=(direct);entry_page==/blog/*')).toEqual([
      { dimension: 'country', operator: '==', values: [v('DE'), v('FR')] },
      { dimension: 'source', operator: '!=', values: [v('(direct)')] },
      { dimension: 'entry_page', operator: '==', values: [v('/blog/', true)] },
    ]);
  });

  it('takes every dimension and both operators', () => {
    const dims = [
      'channel',
      'source',
      'country',
      'device',
      'browser',
      'entry_page',
      'exit_page',
      'page',
      'goal',
    ];
    for (const dim of dims) {
      expect(parseFilters(`${dim}==1`)[0]).toMatchObject({ dimension: dim, operator: '==' });
      expect(parseFilters(`${dim}!=1`)[0]).toMatchObject({ dimension: dim, operator: '!=' });
    }
  });

  it('keeps several conditions on one dimension, in order', () => {
    expect(parseFilters('page==/a*;page!=/a/b').map((f) => f.operator)).toEqual(['==', '!=']);
  });

  it('makes escaped separators, stars and backslashes literal', () => {
    expect(parseFilters('page==/a\\;b|/c\\|d|/e\\*|/f\\\\|/g\\\\*')[0].values).toEqual([
      v('/a;b'),
      v('/c|d'),
      v('/e*'),
      v('/f\\'),
      v('/g\\', true),
    ]);
  });

  it('makes a star a prefix only at the end, and never for goals', () => {
    expect(parseFilters('page==/a*b')[0].values).toEqual([v('/a*b')]);
    expect(parseFilters('page==*')[0].values).toEqual([v('', true)]);
    expect(parseFilters('goal==7*')[0].values).toEqual([v('7*')]);
  });

  it('keeps values as sent: spaces, SQL and LIKE wildcards are plain text', () => {
    expect(parseFilters("channel==Organic Search| x' OR '1'='1|50%_off|a_b%")[0].values).toEqual([
      v('Organic Search'),
      v(" x' OR '1'='1"),
      v('50%_off'),
      v('a_b%'),
    ]);
  });

  it('splits at the first operator: the rest is the value', () => {
    expect(parseFilters('page==/a==b!=c')[0]).toEqual({
      dimension: 'page',
      operator: '==',
      values: [v('/a==b!=c')],
    });
    expect(parseFilters('page!==x')[0]).toEqual({ dimension: 'page', operator: '!=', values: [v('=x')] });
  });

  it.each([
    ['an unknown dimension', 'city==Berlin', /unknown dimension "city"/],
    ['a dimension in another case', 'Country==DE', /unknown dimension "Country"/],
    ['a dimension with spaces', ' country==DE', /unknown dimension " country"/],
    ['an escaped dimension', 'countr\\y==DE', /unknown dimension/],
    ['no operator', 'country=DE', /condition 1 has no == or !=/],
    ['an escaped operator', 'country\\==DE', /has no == or !=/],
    ['a lone word', 'DE', /has no == or !=/],
    ['an empty value', 'country==', /empty value/],
    ['an empty alternative', 'country==DE|', /empty value/],
    ['an empty condition at the end', 'country==DE;', /condition 2 is empty/],
    ['an empty condition between', 'country==DE;;device==mobile', /condition 2 is empty/],
    ['a lone trailing backslash', 'country==DE\\', /lone backslash/],
  ])('rejects %s', (_, parameter, message) => {
    expect(rejection(parameter)).toMatch(message);
  });

  it('allows the limits and rejects one more', () => {
    const conditions = (n: number) => Array.from({ length: n }, () => 'device==mobile').join(';');
    const values = (n: number) => `country==${Array.from({ length: n }, (_, i) => `C${i}`).join('|')}`;
    expect(parseFilters(conditions(FILTER_LIMITS.conditions))).toHaveLength(10);
    expect(rejection(conditions(FILTER_LIMITS.conditions + 1))).toMatch(/at most 10 are allowed/);
    expect(parseFilters(values(FILTER_LIMITS.values))[0].values).toHaveLength(20);
    expect(rejection(values(FILTER_LIMITS.values + 1))).toMatch(/at most 20 are allowed/);
    const long = (bytes: number) => `page==/${'a'.repeat(bytes - 'page==/'.length)}`;
    expect(parseFilters(long(FILTER_LIMITS.bytes))).toHaveLength(1);
    expect(rejection(long(FILTER_LIMITS.bytes + 1))).toMatch(/at most 2048 bytes/);
    // Counted in bytes: 1,000 two-byte characters are over the limit.
    expect(rejection(`page==/${'ä'.repeat(1021)}`)).toMatch(/2048 bytes/);
  });
});

describe('meta.filters', () => {
  it('echoes the values in the notation that parses back to them', () => {
    const parameter = 'page==/a\\;b|/c\\|d|/e\\*|/f\\\\|/blog/*;country!=DE';
    const meta = filtersMeta(parseFilters(parameter));
    expect(meta).toEqual([
      { dimension: 'page', operator: '==', values: ['/a\\;b', '/c\\|d', '/e\\*', '/f\\\\', '/blog/*'] },
      { dimension: 'country', operator: '!=', values: ['DE'] },
    ]);
    const again = meta.map((c) => `${c.dimension}${c.operator}${c.values.join('|')}`).join(';');
    expect(parseFilters(again)).toEqual(parseFilters(parameter));
  });

  it('writes a literal inner star as is', () => {
    expect(formatFilterValue(v('/a*b'))).toBe('/a*b');
  });
});

describe('soleAttributeOf', () => {
  it('names the one session attribute every condition is on', () => {
    expect(soleAttributeOf(parseFilters('country==DE;country!=FR'))).toBe('country');
    expect(soleAttributeOf(parseFilters('country==DE;device==mobile'))).toBeUndefined();
    expect(soleAttributeOf(parseFilters('page==/a'))).toBeUndefined();
    expect(soleAttributeOf([])).toBeUndefined();
  });
});

describe('the session selection', () => {
  const db = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new MysqlAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => new MysqlIntrospector(k),
      createQueryCompiler: () => new MysqlQueryCompiler(),
    },
  });
  const compile = (condition: ReturnType<typeof sessionSelected>): CompiledQuery =>
    sql`SELECT 1 WHERE ${condition}`.compile(db);

  it('adds nothing without filters', () => {
    expect(sessionSelected({ site: { id: 1 }, filters: [] }, 's')).toBeNull();
    expect(rollupValueSelected([], sql.ref('r.value'))).toBeNull();
  });

  it('binds every value: SQL and wildcards never reach the statement text', () => {
    const filters: StatsFilter[] = parseFilters("country==x' OR 1=1 --|50%*;page!=a_b");
    const compiled = compile(sessionSelected({ site: { id: 1 }, filters }, 's'));
    expect(compiled.sql).not.toMatch(/OR 1=1|50%|a_b|LIKE/);
    expect(compiled.parameters).toEqual(["x' OR 1=1 --", 3, '50%', 1, 'a_b']);
  });

  it('refuses a goal condition whose goals were not looked up', () => {
    expect(() =>
      compile(sessionSelected({ site: { id: 1 }, filters: parseFilters('goal==1') }, 's')),
    ).toThrow(/goals resolved/);
  });
});
