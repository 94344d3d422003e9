import { mariadbDialect } from '@app/db/dialect';
import { sql } from 'kysely';
import { rowOfSelectedSession, SessionScope, sessionSelected } from './session-filter';

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
