import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import {
  combinationSelected,
  conditionsOnSeveralAttributes,
  rowOfSelectedSession,
  selectsFewCombinations,
  SessionScope,
  sessionSelected,
  settledSessionSelected,
  StatsFilter,
  storedGoalExists,
  storedGoalSelection,
} from './session-filter';

const page: SessionScope['filters'][number] = {
  dimension: 'page',
  operator: '==',
  values: [{ text: '/pricing', prefix: false }],
};

/** The MariaDB text of a condition, its index markers rendered as the engine's hints. */
function rendered(condition: ReturnType<typeof sessionSelected>): string {
  const compiled = sql`SELECT 1 WHERE ${condition}`.compile(mariadbDialect.builder);
  return mariadbDialect.renderIndexHints(compiled).sql;
}

describe('a page condition: the indexes its hits are read through', () => {
  const scope: SessionScope = { site: { id: 7 }, filters: [page] };

  it('names the step and the session index, MariaDB choosing per statement', () => {
    expect(rendered(sessionSelected(scope, 's'))).toContain(
      'FROM hits fp FORCE INDEX (ix_hits_site_step, ix_hits_site_session) WHERE fp.site_id = ?',
    );
  });

  it('looks the session up in session_pages by its index while those rows are current', () => {
    const text = rendered(rowOfSelectedSession({ ...scope, pageRowsCurrent: true }, 'o'));
    expect(text).toContain('FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id =');
    expect(text).toContain('AND `fs`.`page_key` = ?');
    expect(text).not.toContain('hits');
  });

  it('looks the session up under a prefix by the same index: any of its rows under it', () => {
    const prefix = { ...page, values: [{ text: '/blog/', prefix: true }] };
    const text = rendered(rowOfSelectedSession({ ...scope, filters: [prefix], pageRowsCurrent: true }, 'o'));
    expect(text).toContain('FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id =');
    expect(text).toContain(
      'AND `fs`.`page_key` >= ? AND `fs`.`page_key` < ? AND SUBSTRING(`fs`.`page_key`, 1, ?) = ?)',
    );
    expect(text).not.toContain('prior_page_key');
  });

  it('tests a settled session read by key in session_pages while those rows are current, else by its hits', () => {
    const current = rendered(settledSessionSelected({ ...scope, pageRowsCurrent: true }, 's'));
    expect(current).toContain(
      'FROM session_pages fs FORCE INDEX (ix_session_pages_session) WHERE fs.site_id = `s`.`site_id`',
    );
    expect(current).not.toContain('hits');
    expect(rendered(settledSessionSelected(scope, 's'))).toBe(rendered(sessionSelected(scope, 's')));
    // A condition on an attribute beside: tested on the same row.
    const withCountry = {
      ...scope,
      pageRowsCurrent: true,
      filters: [page, { ...page, dimension: 'country' as const }],
    };
    expect(rendered(settledSessionSelected(withCountry, 's'))).toContain(
      'AND `fs`.`page_key` = ? AND ((`fs`.`country` IN (?))))',
    );
    // Two page conditions: the hits.
    const two = { ...scope, pageRowsCurrent: true, filters: [page, page] };
    expect(rendered(settledSessionSelected(two, 's'))).toBe(rendered(sessionSelected(two, 's')));
  });

  it('names the session index alone where each tested session is looked up by key (a range’s orders)', () => {
    const text = rendered(rowOfSelectedSession(scope, 'o', true));
    expect(text).toContain('FROM hits fp FORCE INDEX (ix_hits_site_session) WHERE fp.site_id = ?');
    expect(text).not.toContain('ix_hits_site_step');
  });

  it('names the session index alone in the raw computation (the parity reference)', () => {
    const text = rendered(sessionSelected({ ...scope, tables: 'raw' }, 's'));
    expect(text).toContain('FROM hits fp FORCE INDEX (ix_hits_site_session) WHERE fp.site_id = ?');
    expect(text).not.toContain('ix_hits_site_step');
  });
});

describe('storedGoalSelection: conditions on goals over the stored goals of settled sessions', () => {
  const goal = (operator: '==' | '!=', ...ids: number[]): StatsFilter => ({
    dimension: 'goal',
    operator,
    values: ids.map((id) => ({ text: String(id), prefix: false })),
    goals: ids.map((id) => ({ id, type: 'event', matchValue: `e${id}` })),
  });
  const text = (condition: ReturnType<typeof sessionSelected>) =>
    sql`SELECT 1 WHERE ${condition}`.compile(mariadbDialect.builder);

  it('is for conditions on goals only', () => {
    expect(storedGoalSelection([])).toBeNull();
    expect(storedGoalSelection([goal('==', 3), page])).toBeNull();
  });

  it("reads the first == condition's goals and tests the others on each session's stored goals", () => {
    const selection = storedGoalSelection([goal('!=', 5), goal('==', 3, 4), goal('==', 6)])!;
    expect(selection).toMatchObject({ base: [3, 4], complement: false });
    expect(selection.counted).toHaveLength(3);
    const rest = text(selection.rest('s'));
    expect(rest.sql).toBe(
      'SELECT 1 WHERE (NOT EXISTS (SELECT 1 FROM session_goals stored_goal WHERE stored_goal.site_id = `s`.`site_id` AND stored_goal.session_id = `s`.`session_id` AND stored_goal.goal_id IN (?)) AND EXISTS (SELECT 1 FROM session_goals stored_goal WHERE stored_goal.site_id = `s`.`site_id` AND stored_goal.session_id = `s`.`session_id` AND stored_goal.goal_id IN (?)))',
    );
    expect(rest.parameters).toEqual([5, 6]);
    expect(storedGoalSelection([goal('==', 3)])!.rest('s')).toBeNull();
  });

  it('with != conditions only, counts the sessions of any of their goals, to be taken from the rest', () => {
    const selection = storedGoalSelection([goal('!=', 3, 4), goal('!=', 4, 7)])!;
    expect(selection).toMatchObject({ base: [3, 4, 7], complement: true });
    expect(selection.counted).toEqual([
      {
        dimension: 'goal',
        operator: '==',
        values: ['3', '4', '7'].map((t) => ({ text: t, prefix: false })),
        goals: [3, 4, 7].map((id) => ({ id, type: 'event', matchValue: `e${id}` })),
      },
    ]);
    expect(selection.rest('s')).toBeNull();
  });
});

describe("storedGoalExists: a goal stored for the row's session", () => {
  const text = (condition: ReturnType<typeof storedGoalExists>) =>
    sql`SELECT 1 WHERE ${condition}`.compile(mariadbDialect.builder);

  it("any goal, some goals, or one before a stored goal row (its session's first when negated)", () => {
    expect(text(storedGoalExists('s')).sql).toBe(
      'SELECT 1 WHERE EXISTS (SELECT 1 FROM session_goals stored_goal WHERE stored_goal.site_id = `s`.`site_id` AND stored_goal.session_id = `s`.`session_id`)',
    );
    const first = text(storedGoalExists('b', { goalIds: [3, 4], before: 'b' }));
    expect(first.sql).toBe(
      'SELECT 1 WHERE EXISTS (SELECT 1 FROM session_goals stored_goal WHERE stored_goal.site_id = `b`.`site_id` AND stored_goal.session_id = `b`.`session_id` AND stored_goal.goal_id IN (?, ?) AND stored_goal.goal_id < `b`.`goal_id`)',
    );
    expect(first.parameters).toEqual([3, 4]);
  });
});

describe('conditions on attributes as combinations (combinationSelected)', () => {
  const on = (dimension: StatsFilter['dimension'], operator: '==' | '!=', text: string): StatsFilter => ({
    dimension,
    operator,
    values: [{ text, prefix: false }],
  });

  it('selects the combinations of the attribute conditions only, in the site’s list', () => {
    const scope: SessionScope = {
      site: { id: 7 },
      filters: [on('country', '==', 'DE'), page, on('device', '!=', 'mobile')],
    };
    const text = rendered(combinationSelected(scope, 's'));
    expect(text).toContain(
      '`s`.`attributes_hash` IN (SELECT fc.attributes_hash FROM attribute_combinations fc WHERE fc.site_id = ?',
    );
    expect(text).toContain('(`fc`.`country` IN (?)) AND NOT (`fc`.`device` IN (?))');
    expect(text).not.toContain('hits');
  });

  it('adds nothing without an attribute condition, or on the raw path', () => {
    expect(combinationSelected({ site: { id: 7 }, filters: [page] }, 's')).toBeNull();
    expect(combinationSelected({ site: { id: 7 }, filters: [] }, 's')).toBeNull();
    expect(
      combinationSelected({ site: { id: 7 }, filters: [on('country', '==', 'DE')], tables: 'raw' }, 's'),
    ).toBeNull();
  });

  it('names the combinations the request listed: none selects no session', () => {
    const scope: SessionScope = {
      site: { id: 7 },
      filters: [on('country', '==', 'DE'), on('device', '!=', 'mobile')],
      combinations: ['01'.repeat(16), 'ab'.repeat(16)],
    };
    const compiled = sql`SELECT 1 WHERE ${combinationSelected(scope, 's')}`.compile(mariadbDialect.builder);
    expect(compiled.sql).toContain(
      `\`s\`.\`attributes_hash\` IN (X'${'01'.repeat(16)}', X'${'ab'.repeat(16)}')`,
    );
    expect(compiled.sql).not.toContain('attribute_combinations');
    expect(compiled.parameters).toEqual([]);
    // Anything but a hash's hex text is refused, never written into the SQL.
    expect(() => combinationSelected({ ...scope, combinations: ["' OR 1=1 --"] }, 's')).toThrow(
      /not a 16-byte hash/,
    );
    expect(rendered(combinationSelected({ ...scope, combinations: [] }, 's'))).toContain('(1 = 0)');
    // The raw path names none.
    expect(combinationSelected({ ...scope, tables: 'raw' }, 's')).toBeNull();
  });

  it('writes a listed set once for every statement of the request, each list its own', () => {
    const combinations = ['01'.repeat(16), 'ab'.repeat(16)];
    const scope: SessionScope = {
      site: { id: 7 },
      filters: [on('country', '==', 'DE'), on('device', '!=', 'mobile')],
      combinations,
    };
    const first = combinationSelected(scope, 's');
    const second = combinationSelected({ ...scope }, 'a');
    expect(rendered(second)).toContain(
      `\`a\`.\`attributes_hash\` IN (X'${'01'.repeat(16)}', X'${'ab'.repeat(16)}')`,
    );
    expect(rendered(first)).toContain(
      `\`s\`.\`attributes_hash\` IN (X'${'01'.repeat(16)}', X'${'ab'.repeat(16)}')`,
    );
    // Another request's list, even of the same text, is written from its own hashes.
    const other = combinationSelected({ ...scope, combinations: ['cd'.repeat(16)] }, 's');
    expect(rendered(other)).toContain(`IN (X'${'cd'.repeat(16)}')`);
    expect(() => combinationSelected({ ...scope, combinations: [...combinations, 'zz'] }, 's')).toThrow(
      /not a 16-byte hash in hex: zz/,
    );
  });

  it('lists combinations only for conditions on two attributes or more', () => {
    const several = (filters: StatsFilter[]) => conditionsOnSeveralAttributes({ site: { id: 7 }, filters });
    expect(several([on('country', '==', 'DE'), on('device', '==', 'mobile')])).toBe(true);
    expect(several([on('country', '==', 'DE'), on('country', '!=', 'FR')])).toBe(false);
    expect(several([on('country', '==', 'DE'), page])).toBe(false);
  });

  it('calls the combinations few when the request listed them', () => {
    const filters = [on('country', '==', 'DE'), on('device', '==', 'mobile')];
    expect(selectsFewCombinations({ site: { id: 7 }, filters, combinations: [] })).toBe(true);
    expect(selectsFewCombinations({ site: { id: 7 }, filters })).toBe(false);
    expect(selectsFewCombinations({ site: { id: 7 }, filters, combinations: [], tables: 'raw' })).toBe(false);
  });
});
