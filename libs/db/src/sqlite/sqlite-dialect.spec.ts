import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, sql } from 'kysely';
import { tableWithIndexMarker } from '../dialect';
import { embeddedSqliteDriver } from './embedded-driver';
import { scaledInteger, sqliteDialect as sut } from './sqlite-dialect';

const Database = embeddedSqliteDriver();

describe('sqliteDialect', () => {
  let db: BetterSqlite3.Database;
  const one = <T>(expression: ReturnType<typeof sql>, params: unknown[] = []): T => {
    const compiled = sql`SELECT ${expression} AS v`.compile(sut.builder);
    return (db.prepare(compiled.sql).get(...compiled.parameters, ...params) as { v: T }).v;
  };
  const at = (text: string) => sql.lit(text);

  beforeEach(() => {
    db = new Database(':memory:');
    db.exec(`CREATE TABLE t (k TEXT NOT NULL, j TEXT NOT NULL, n INTEGER NOT NULL, note TEXT, PRIMARY KEY (k, j)) WITHOUT ROWID;
             CREATE TABLE c (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, changed_at DATETIME NOT NULL);`);
  });

  afterEach(() => db.close());

  describe('datetimes stored as UTC text', () => {
    it('floors to the 15-minute UTC bucket in the stored form', () => {
      const floor = (text: string) =>
        (db.prepare(`SELECT ${sut.floorToQuarterHour('?')} AS v`).get(text) as { v: string }).v;
      expect(floor('2026-03-29 01:59:59.999')).toBe('2026-03-29 01:45:00.000');
      expect(floor('2026-03-29 02:00:00.000')).toBe('2026-03-29 02:00:00.000');
    });

    it('floors to the UTC day in the stored form', () => {
      const floor = (text: string) =>
        (db.prepare(`SELECT ${sut.floorToUtcDay('?')} AS v`).get(text) as { v: string }).v;
      expect(floor('2026-03-29 23:59:59.999')).toBe('2026-03-29 00:00:00.000');
      expect(floor('2026-03-30 00:00:00.000')).toBe('2026-03-30 00:00:00.000');
    });

    it('moves a datetime by whole seconds, keeping its milliseconds, across a day', () => {
      expect(one(sut.addSeconds(at('2026-01-01 00:00:00.500'), sql.lit(-3600)))).toBe(
        '2025-12-31 23:00:00.500',
      );
      expect(one(sut.addSeconds(at('2026-01-01 23:30:00.000'), sql.lit(5 * 3600 + 45 * 60)))).toBe(
        '2026-01-02 05:15:00.000',
      );
    });

    it('gives the calendar date and the epoch seconds, truncating milliseconds', () => {
      expect(one(sut.dateOf(at('2026-07-04 23:59:59.999')))).toBe('2026-07-04');
      expect(one(sut.epochSeconds(at('1970-01-02 00:00:01.999')))).toBe(86401);
    });

    it('counts the exact milliseconds between two datetimes, the stored form of seconds', () => {
      expect(one(sut.secondsBetween(at('2026-01-01 23:59:59.900'), at('2026-01-02 00:00:01.150')))).toBe(
        1250,
      );
      expect(one(sut.secondsBetween(at('2026-01-01 10:00:00.000'), at('2026-01-01 10:00:00.000')))).toBe(0);
    });

    it('binds a Date as the stored text and reads a DATETIME column back as that Date', () => {
      const instant = new Date('2026-02-03T04:05:06.789Z');
      db.prepare('INSERT INTO c (id, version, changed_at) VALUES (1, 1, ?)').run(instant);
      expect(db.prepare('SELECT changed_at AS raw FROM c').raw().get()).toEqual(['2026-02-03 04:05:06.789']);
      expect(db.prepare('SELECT changed_at FROM c WHERE changed_at = ?').get(instant)).toEqual({
        changed_at: instant,
      });
    });

    it('finds the bucket of a value among ascending starts, first and last included', () => {
      const starts = [0, 3600, 7200, 10800, 14400].map((s) => 1_767_225_600 + s);
      const bucketOf = (text: string) => one<number>(sut.bucketIndex(at(text), starts));
      expect(bucketOf('2026-01-01 00:00:00.000')).toBe(0);
      expect(bucketOf('2026-01-01 00:59:59.999')).toBe(0);
      expect(bucketOf('2026-01-01 01:00:00.000')).toBe(1);
      expect(bucketOf('2026-01-01 03:30:00.000')).toBe(3);
      expect(bucketOf('2026-01-01 23:00:00.000')).toBe(4);
    });
  });

  describe('exact decimals stored as integers', () => {
    it('stores money in cents and seconds in milliseconds without a float', () => {
      expect(sut.decimalIn('12.3', 2)).toBe(1230);
      expect(sut.decimalIn('0.07', 2)).toBe(7);
      expect(sut.decimalIn('19.99', 2)).toBe(1999);
      expect(sut.decimalIn(7.125, 3)).toBe(7125);
      expect(sut.decimalIn(0.1 + 0.2, 3)).toBe(300);
      expect(sut.decimalIn(null, 2)).toBeNull();
    });

    it('refuses what it cannot store exactly', () => {
      expect(() => scaledInteger('1.234', 2)).toThrow(/more than 2 decimals/);
      expect(() => scaledInteger('abc', 2)).toThrow(/not an exact decimal/);
      expect(() => scaledInteger('99999999999999999', 2)).toThrow(/too large/);
      expect(scaledInteger('1.230', 2)).toBe(123);
    });

    it('reads a BLOB back as its hex text, which crosses the read pool as a string', () => {
      expect(one(sut.blobOut(sql`X'00ff10'`))).toBe('00FF10');
    });

    it('reads stored integers back as the decimal strings the MySQL family returns', () => {
      expect(one(sut.decimalText(sql.lit(1230), 2))).toBe('12.30');
      expect(one(sut.decimalText(sql.lit(0), 2))).toBe('0.00');
      expect(one(sut.decimalText(sql.lit(5), 2))).toBe('0.05');
      expect(one(sut.decimalText(sql.lit(-5), 2))).toBe('-0.05');
      expect(one(sut.decimalText(sql.lit(7125), 3))).toBe('7.125');
      expect(one(sut.decimalText(sql.lit(90_071_992_547_409), 2))).toBe('900719925474.09');
    });
  });

  describe('writes', () => {
    const rows = () => db.prepare('SELECT k, j, n, note FROM t ORDER BY k, j').all();

    it('adds to the row with the same unique key, leaving the columns stored beside it', () => {
      const upsert = sut.upsertAdd('t', ['k', 'j', 'note'], ['n'], 2, ['k', 'j']);
      db.prepare(upsert).run('a', 'x', 'first', 2, 'b', 'x', 'first', 3);
      db.prepare(upsert).run('a', 'x', 'second', -1, 'c', 'y', 'second', 1);
      expect(rows()).toEqual([
        { k: 'a', j: 'x', n: 1, note: 'first' },
        { k: 'b', j: 'x', n: 3, note: 'first' },
        { k: 'c', j: 'y', n: 1, note: 'second' },
      ]);
    });

    it('adds the rows of a SELECT, grouped or not', () => {
      const upsert = sut.upsertAddSelect(
        't',
        ['k', 'j'],
        ['n'],
        "SELECT 'a', 'x', 5 UNION ALL SELECT 'b', 'x', 1",
      );
      db.prepare(upsert).run();
      db.prepare(upsert).run();
      expect(rows()).toEqual([
        { k: 'a', j: 'x', n: 10, note: null },
        { k: 'b', j: 'x', n: 2, note: null },
      ]);
    });

    it('counts with upsertIncrement and skips existing keys with insertIgnore', () => {
      const increment = sut.upsertIncrement('c', ['id', 'version', 'changed_at'], 'version', 1);
      db.prepare(increment).run(7, new Date(0));
      db.prepare(increment).run(7, new Date(1000));
      expect(db.prepare('SELECT id, version, changed_at FROM c').get()).toEqual({
        id: 7,
        version: 2,
        changed_at: new Date(1000),
      });
      db.prepare(sut.insertIgnore('t', ['k', 'j', 'n'], 2)).run('a', 'x', 1, 'a', 'x', 9);
      expect(rows()).toEqual([{ k: 'a', j: 'x', n: 1, note: null }]);
    });

    it('reads the rows of each condition of lockingReadEach, parameters in order', () => {
      db.prepare(sut.insertIgnore('t', ['k', 'j', 'n'], 3)).run('a', 'x', 1, 'a', 'y', 2, 'b', 'x', 3);
      const read = sut.lockingReadEach('SELECT k, j FROM t', ['k = ? AND j IN (?)', 'k = ? AND j IN (?, ?)']);
      expect(db.prepare(`${read} ORDER BY k, j`).all('a', 'y', 'b', 'x', 'z')).toEqual([
        { k: 'a', j: 'y' },
        { k: 'b', j: 'x' },
      ]);
    });

    it('deletes rows listed as row values', () => {
      db.prepare(sut.insertIgnore('t', ['k', 'j', 'n'], 3)).run('a', 'x', 1, 'a', 'y', 2, 'b', 'x', 3);
      db.prepare(`DELETE FROM t WHERE ${sut.rowsIn(['k', 'j'], 2)}`).run('a', 'y', 'b', 'x');
      expect(rows()).toEqual([{ k: 'a', j: 'x', n: 1, note: null }]);
    });
  });

  describe('statement shapes', () => {
    it('writes index hints as INDEXED BY, from markers too', () => {
      const marked = `SELECT 1 FROM ${tableWithIndexMarker('t', 'x', 'ix_t_k')} WHERE x.k = ?`;
      const compiled = sut.renderIndexHints(CompiledQuery.raw(marked, ['a']));
      expect(compiled.sql).toBe('SELECT 1 FROM t x INDEXED BY ix_t_k WHERE x.k = ?');
      // SQLite names one index: of several, the first.
      const several = `SELECT 1 FROM ${tableWithIndexMarker('t', 'x', ['ix_t_k', 'ix_t_j'])} WHERE x.k = ?`;
      expect(sut.renderIndexHints(CompiledQuery.raw(several, ['a'])).sql).toBe(
        'SELECT 1 FROM t x INDEXED BY ix_t_k WHERE x.k = ?',
      );
      expect(sut.tableWithIndex('t', 'x', 'ix_t_k')).toBe('t x INDEXED BY ix_t_k');
      db.exec(
        'CREATE TABLE h (site INTEGER, k TEXT, kind TEXT, ts TEXT); CREATE INDEX ix_h_kind ON h (site, kind, ts); CREATE INDEX ix_h_k ON h (site, k, ts)',
      );
      const plan = (from: string) =>
        db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT ts FROM ${from} WHERE x.site = 1 AND x.k = 'a' AND x.kind = 'p' ORDER BY x.ts LIMIT 1`,
          )
          .all() as Array<{ detail: string }>;
      expect(
        plan(sut.tableWithIndex('h', 'x', 'ix_h_k'))
          .map((r) => r.detail)
          .join(),
      ).toContain('ix_h_k');
    });

    it('updates through the index updateWithIndex names, the table named as itself in its SET', () => {
      db.exec(
        `CREATE TABLE u (site INTEGER, k TEXT, j TEXT, v TEXT); CREATE INDEX ix_u_k ON u (site, k); CREATE INDEX ix_u_j ON u (site, j);
         CREATE TABLE w (site INTEGER, k TEXT, v TEXT);
         INSERT INTO u VALUES (1, 'a', 'x', NULL), (1, 'b', 'x', NULL); INSERT INTO w VALUES (1, 'a', 'first'), (1, 'b', 'second')`,
      );
      const update = (index: string) =>
        `${sut.updateWithIndex('u', index)} SET v = (SELECT w.v FROM w WHERE w.site = u.site AND w.k = u.k) WHERE u.site = 1 AND u.k = 'a' AND u.j = 'x'`;
      expect(update('ix_u_j')).toMatch(/^UPDATE u INDEXED BY ix_u_j SET /);
      for (const index of ['ix_u_k', 'ix_u_j']) {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${update(index)}`).all() as Array<{ detail: string }>;
        expect(plan[0].detail).toContain(index);
      }
      db.prepare(update('ix_u_j')).run();
      expect(db.prepare('SELECT k, v FROM u ORDER BY k').all()).toEqual([
        { k: 'a', v: 'first' },
        { k: 'b', v: null },
      ]);
    });

    it('updates the rows updateFromRows matches with its source rows, and no other', () => {
      db.exec(
        `CREATE TABLE p (site INTEGER, k TEXT, v TEXT, PRIMARY KEY (site, k));
         INSERT INTO p VALUES (1, 'a', NULL), (1, 'b', 'kept'), (2, 'a', NULL)`,
      );
      const update = sut.updateFromRows(
        'p',
        't',
        "SELECT 1 AS site, 'a' AS k, 'set' AS v UNION ALL SELECT 1, 'z', 'none'",
        't.site = x.site AND t.k = x.k',
        'v',
      );
      expect(update).toMatch(/^UPDATE p AS t SET v = x\.v FROM \(/);
      expect(db.prepare(update).run().changes).toBe(1);
      expect(db.prepare('SELECT site, k, v FROM p ORDER BY site, k').all()).toEqual([
        { site: 1, k: 'a', v: 'set' },
        { site: 1, k: 'b', v: 'kept' },
        { site: 2, k: 'a', v: null },
      ]);
    });

    it('reads the left table of an orderedJoin first, even where the planner would start from the right', () => {
      db.exec(
        'CREATE TABLE big (site INTEGER, id TEXT, PRIMARY KEY (site, id)); CREATE TABLE few (id TEXT); CREATE INDEX ix_few_id ON few (id)',
      );
      const plan = (join: string) =>
        (
          db
            .prepare(`EXPLAIN QUERY PLAN SELECT 1 FROM few f ${join} big b ON b.site = 1 AND b.id = f.id`)
            .all() as Array<{ detail: string }>
        ).map((r) => r.detail);
      expect(plan('JOIN')[0]).toMatch(/^SEARCH b\b/);
      expect(sut.orderedJoin).toBe('CROSS JOIN');
      expect(plan(sut.orderedJoin)[0]).toMatch(/^SCAN f\b/);
    });

    it('keeps a derived table from being flattened with a LIMIT that limits nothing', () => {
      const compiled = sql`SELECT * FROM (${sut.materialized(sql`SELECT k FROM t`)}) d`.compile(sut.builder);
      expect(compiled.sql).toBe('SELECT * FROM (SELECT k FROM t LIMIT -1) d');
      db.prepare(sut.insertIgnore('t', ['k', 'j', 'n'], 2)).run('a', 'x', 1, 'b', 'x', 1);
      expect(db.prepare(compiled.sql).all()).toHaveLength(2);
    });

    it('has no server statement to cancel and no replicas', () => {
      expect(() => sut.cancelStatement).toThrow(/no server/);
      expect(() => sut.replicationPosition('primary')).toThrow(/no replicas/);
    });
  });
});
