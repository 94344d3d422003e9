import {
  deleteEmptiedRows,
  RollupTable,
  SESSIONS_COUNT,
  withBufferedRollupWrites,
  writeRollupDeltas,
} from '@app/ingest/rollup-writer';
import { sketchesOfBuckets, valueSketchesOfBuckets } from '@app/ingest/visitor-sketch-builder';
import { hitRollupStatements } from '@app/ingest/hit-writer';
import type { Hit } from '@app/ingest/hit';
import { TEST_ENGINE, TestEnv } from './support/test-env';

const QUARTER_MS = 15 * 60_000;
const START = Date.parse('2026-03-01T00:00:00Z');
const DIMENSIONS = ['channel', 'source', 'country', 'device', 'browser'] as const;

interface Row {
  dimension: (typeof DIMENSIONS)[number];
  bucket: Date;
  value: string;
  sessions: number;
}

/** session_rollups, written as `aggregate` writes it (only the sessions and bounces change here). */
/** SQLite's plan of `statement`, one line per step (EXPLAIN QUERY PLAN's details). */
async function sqlitePlan(env: TestEnv, statement: string, parameters: unknown[]): Promise<string> {
  const rows = await env.ds.query<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${statement}`, parameters);
  return rows.map((r) => r.detail).join('\n');
}

/** The MySQL family's plan of `statement`'s first table (EXPLAIN's first row). */
async function serverPlan(
  env: TestEnv,
  statement: string,
  parameters: unknown[],
): Promise<{ type: string; key: string; rows: number | string }> {
  const [plan] = await env.ds.query<Array<{ type: string; key: string; rows: number | string }>>(
    `EXPLAIN ${statement}`,
    parameters,
  );
  return plan;
}

const SESSION_ROLLUP: RollupTable<Row> = {
  table: 'session_rollups',
  keys: ['dimension', 'bucket', 'value'],
  sums: ['sessions', 'bounces', 'session_pageviews', 'duration_seconds'],
  identity: ['dimension', 'bucket', 'value'],
  keyValues: (r) => [r.dimension, r.bucket, r.value],
  sumValues: (r) => [r.sessions, 0, r.sessions, 0],
  count: SESSIONS_COUNT,
};

/**
 * The rows a delta empties are deleted by their key. `aggregate` writes such deletes in every
 * chunk that derives a session again (late hits, one more hour): read through the site's whole
 * rollup, as MariaDB did for a row list with an ENUM column (`dimension`), each of them cost in
 * proportion to the site's rollup rows, not to the rows it deletes.
 */
describe('rollup writes: rows emptied by a delta', () => {
  let env: TestEnv;
  const site = 7;
  const rows: Row[] = Array.from({ length: 400 }, (_, i) => ({
    dimension: DIMENSIONS[i % DIMENSIONS.length],
    bucket: new Date(START + Math.floor(i / DIMENSIONS.length) * QUARTER_MS),
    value: `v${i % 3}`,
    sessions: 2,
  }));
  const emptied = [rows[17], rows[263]];

  beforeAll(async () => {
    env = await TestEnv.create();
    await writeRollupDeltas(env.ds.manager, env.dialect, site, rows, SESSION_ROLLUP);
    // Another site's rows under the same keys: never touched.
    await writeRollupDeltas(env.ds.manager, env.dialect, site + 1, rows, SESSION_ROLLUP);
  });
  afterAll(() => env.close());

  it('deletes exactly the rows whose count fell to 0, and only on that site', async () => {
    const deltas = [...emptied, rows[100]].map((r) => ({ ...r, sessions: r === rows[100] ? -1 : -2 }));
    await writeRollupDeltas(env.ds.manager, env.dialect, site, deltas, SESSION_ROLLUP);
    const count = async (siteId: number) =>
      Number(
        (
          await env.ds.query<Array<{ n: number | string }>>(
            'SELECT COUNT(*) AS n FROM session_rollups WHERE site_id = ?',
            [siteId],
          )
        )[0].n,
      );
    expect(await count(site)).toBe(rows.length - emptied.length);
    expect(await count(site + 1)).toBe(rows.length);
    const left = await env.ds.query<Array<{ sessions: number | string }>>(
      `SELECT sessions FROM session_rollups WHERE site_id = ? AND dimension = ? AND value = ? AND bucket = ?`,
      [site, rows[100].dimension, rows[100].value, rows[100].bucket],
    );
    expect(left.map((r) => Number(r.sessions))).toEqual([1]);
  });

  it("holds a transaction's rows back until its end, then writes every site's rows together", async () => {
    const [a, b] = [site + 10, site + 11];
    const some = rows.slice(0, 40);
    const count = async (siteId: number, em = env.ds.manager) =>
      Number(
        (
          await em.query<Array<{ n: number | string }>>(
            'SELECT COUNT(*) AS n FROM session_rollups WHERE site_id = ?',
            [siteId],
          )
        )[0].n,
      );
    await writeRollupDeltas(env.ds.manager, env.dialect, a, some, SESSION_ROLLUP);
    const seen = await env.ds.transaction((em) =>
      withBufferedRollupWrites(em, env.dialect, async () => {
        // Site a loses two rows and one session of a third; site b gets all forty.
        const deltas = [some[3], some[21], some[30]].map((r) => ({
          ...r,
          sessions: r === some[30] ? -1 : -2,
        }));
        await writeRollupDeltas(em, env.dialect, a, deltas, SESSION_ROLLUP);
        await writeRollupDeltas(em, env.dialect, b, some, SESSION_ROLLUP);
        return { a: await count(a, em), b: await count(b, em) };
      }),
    );
    expect(seen).toEqual({ a: 40, b: 0 });
    expect({ a: await count(a), b: await count(b) }).toEqual({ a: 38, b: 40 });
    const [left] = await env.ds.query<Array<{ sessions: number | string }>>(
      `SELECT sessions FROM session_rollups WHERE site_id = ? AND dimension = ? AND value = ? AND bucket = ?`,
      [a, some[30].dimension, some[30].value, some[30].bucket],
    );
    expect(Number(left.sessions)).toBe(1);
  });

  // A plan, not a time: the listed rows are looked up by the whole primary key.
  it('reads the listed rows by the whole primary key, not every row of the site', async () => {
    const statement = deleteEmptiedRows(env.dialect, SESSION_ROLLUP, emptied.length);
    const parameters = emptied.flatMap((r) => [site, ...SESSION_ROLLUP.keyValues(r)]);
    if (TEST_ENGINE === 'sqlite') {
      expect(await sqlitePlan(env, statement, parameters)).toMatch(
        /^SEARCH session_rollups USING .*\(site_id=\? AND dimension=\? AND bucket=\? AND value=\?\)$/m,
      );
    } else {
      const plan = await serverPlan(env, statement, parameters);
      expect(plan).toMatchObject({ type: 'range', key: 'PRIMARY' });
      // One row per listed key (the old plan: every row of the site, 400).
      expect(Number(plan.rows)).toBeLessThanOrEqual(emptied.length);
    }
  });

  // A plan, not a time: a near-empty queue's statistics make a scan look cheapest, and a
  // scanning DELETE locks every queued row, other sites' included.
  it('deletes queued sessions through the primary key, not by a scan of the queue', async () => {
    const queued = Array.from({ length: 30 }, (_, i) => [site + (i % 3), `q-${i}`, new Date(START)]);
    await env.ds.query(
      env.dialect.insertIgnore('dirty_sessions', ['site_id', 'session_id', 'marked_at'], queued.length),
      queued.flat(),
    );
    const ids = queued.filter(([s]) => s === site).map(([, id]) => id);
    const statement = `${env.dialect.deleteByPrimaryKey('dirty_sessions')} WHERE site_id = ? AND session_id IN (${ids.map(() => '?').join(',')})`;
    if (TEST_ENGINE === 'sqlite') {
      expect(await sqlitePlan(env, statement, [site, ...ids])).toMatch(
        /^SEARCH dirty_sessions USING .*\(site_id=\? AND session_id=\?\)/m,
      );
    } else {
      const plan = await serverPlan(env, statement, [site, ...ids]);
      expect(plan).toMatchObject({ key: 'PRIMARY' });
      expect(plan.type).not.toBe('ALL');
    }
    await env.ds.query(statement, [site, ...ids]);
    const left = await env.ds.query<Array<{ site_id: number | string }>>(
      'SELECT site_id FROM dirty_sessions ORDER BY site_id, session_id',
    );
    expect(left.map((r) => Number(r.site_id))).toEqual([
      ...Array(10).fill(site + 1),
      ...Array(10).fill(site + 2),
    ]);
  });

  // A plan, not a time: with statistics taken while the table was nearly empty (a backfill),
  // MariaDB read a list of buckets OR-ed as a scan of the whole table, under a locking read.
  // A plan, not a time: without statistics SQLite read a site's pageviews through (site_id,
  // type) for the type's test, every pageview of the site for each batch of an import.
  it("reads an import batch's pageviews by their ids for the pageview rollup, not every pageview of the site", async () => {
    const batch = [
      ...Array.from({ length: 300 }, (_, i) => ({ id: `big-${i}`, siteId: site, type: 'pageview' })),
      ...Array.from({ length: 5 }, (_, i) => ({ id: `small-${i}`, siteId: site + 1, type: 'pageview' })),
    ] as Hit[];
    const [statement, ...more] = hitRollupStatements(env.dialect, batch, []);
    expect(more).toEqual([]);
    if (TEST_ENGINE === 'sqlite') {
      const plan = await sqlitePlan(env, statement.sql, [...statement.parameters]);
      expect(plan).not.toMatch(/ix_hits_site_(step|type_ts|session|visitor)/);
      expect(plan).toMatch(/SEARCH h USING INDEX uq_hits_site_hit \(site_id=\? AND hit_id=\?\)/);
    } else {
      expect(await serverPlan(env, statement.sql, [...statement.parameters])).toMatchObject({
        key: 'uq_hits_site_hit',
      });
    }
  });

  it('reads the value sketches of the listed buckets through the primary key, not by a scan', async () => {
    const HOUR = 3_600_000;
    const stored = Array.from({ length: 600 }, (_, i) => [
      site + (i % 4),
      DIMENSIONS[i % DIMENSIONS.length],
      i % 2 === 0 ? 'hour' : 'day',
      new Date(START + Math.floor(i / 20) * HOUR),
      `v${i % 7}`,
      Buffer.from([i % 256]),
    ]);
    for (let i = 0; i < stored.length; i += 100) {
      const part = stored.slice(i, i + 100);
      await env.ds.query(
        `INSERT INTO visitor_value_sketches (site_id, dimension, grain, bucket, value, registers) VALUES ${part
          .map(() => '(?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        part.flat(),
      );
    }
    // A hundred buckets per statement, as aggregate reads them; those of hours 30–49 hold nothing.
    const buckets = Array.from({ length: 100 }, (_, i) => ({
      siteId: site + (i % 4),
      grain: i % 2 === 0 ? ('hour' as const) : ('day' as const),
      bucket: START + (i % 50) * HOUR,
    }));
    const [statement, parameters] = valueSketchesOfBuckets(env.dialect, buckets);
    if (TEST_ENGINE === 'sqlite') {
      const plan = await sqlitePlan(env, statement, parameters);
      expect(plan).not.toMatch(/^SCAN visitor_value_sketches/m);
      expect(plan).toMatch(/^SEARCH visitor_value_sketches USING PRIMARY KEY \(site_id=\? AND dimension=\?/m);
    } else {
      expect(await serverPlan(env, statement, parameters)).toMatchObject({ type: 'range', key: 'PRIMARY' });
    }
    // Exactly the rows of the listed buckets, of every attribute.
    const listed = new Set(buckets.map((b) => `${b.siteId}|${b.grain}|${b.bucket}`));
    const expected = stored.filter(([s, , g, b]) =>
      listed.has(`${String(s)}|${String(g)}|${(b as Date).getTime()}`),
    );
    const read = await env.ds.transaction((em) =>
      em.query<
        Array<{ site_id: number | string; grain: string; bucket: Date; dimension: string; value: string }>
      >(statement, parameters),
    );
    const key = (r: {
      site_id: unknown;
      grain: unknown;
      bucket: unknown;
      dimension: unknown;
      value: unknown;
    }) =>
      `${String(r.site_id)}|${String(r.grain)}|${new Date(r.bucket as Date).getTime()}|${String(r.dimension)}|${String(r.value)}`;
    expect(expected.length).toBeGreaterThan(0);
    expect(read.map(key).sort()).toEqual(
      expected
        .map(([site_id, dimension, grain, bucket, value]) =>
          key({ site_id, grain, bucket, dimension, value }),
        )
        .sort(),
    );
  });

  // A plan, not a time: the same for the hour and day sketches `aggregate` adds to (run AP:
  // three such reads scanned the table in a smoke-size backfill, 0.7 s each of waiting).
  it('reads the hour and day sketches of the listed buckets through the primary key, not by a scan', async () => {
    const HOUR = 3_600_000;
    const stored = Array.from({ length: 400 }, (_, i): [number, 'hour' | 'day', Date, Buffer] => [
      site + (i % 4),
      i % 2 === 0 ? 'hour' : 'day',
      new Date(START + Math.floor(i / 4) * HOUR),
      Buffer.from([i % 256]),
    ]);
    for (let i = 0; i < stored.length; i += 100) {
      const part = stored.slice(i, i + 100);
      await env.ds.query(
        `INSERT INTO visitor_sketches (site_id, grain, bucket, registers) VALUES ${part.map(() => '(?, ?, ?, ?)').join(', ')}`,
        part.flat(),
      );
    }
    // A hundred keys per statement, as aggregate reads them; those past hour 100 hold nothing.
    const keys = Array.from({ length: 100 }, (_, i): [number, 'hour' | 'day', Date] => [
      site + (i % 4),
      i % 2 === 0 ? 'hour' : 'day',
      new Date(START + (i % 4 === 3 ? 100 + i : i) * HOUR),
    ]);
    const [statement, parameters] = sketchesOfBuckets(env.dialect, keys);
    if (TEST_ENGINE === 'sqlite') {
      const plan = await sqlitePlan(env, statement, parameters);
      expect(plan).not.toMatch(/^SCAN visitor_sketches/m);
      expect(plan).toMatch(/^(MULTI-INDEX OR|SEARCH visitor_sketches USING PRIMARY KEY)/m);
    } else {
      expect(await serverPlan(env, statement, parameters)).toMatchObject({ type: 'range', key: 'PRIMARY' });
    }
    // Exactly the rows of the listed keys.
    const key = (siteId: unknown, grain: unknown, bucket: unknown) =>
      `${String(siteId)}|${String(grain)}|${new Date(bucket as Date).getTime()}`;
    const listed = new Set(keys.map(([s, g, b]) => key(s, g, b)));
    const expected = stored.filter(([s, g, b]) => listed.has(key(s, g, b)));
    const read = await env.ds.transaction((em) =>
      em.query<Array<{ site_id: unknown; grain: unknown; bucket: unknown }>>(statement, parameters),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(keys.length);
    expect(read.map((r) => key(r.site_id, r.grain, r.bucket)).sort()).toEqual(
      expected.map(([s, g, b]) => key(s, g, b)).sort(),
    );
  });
});
