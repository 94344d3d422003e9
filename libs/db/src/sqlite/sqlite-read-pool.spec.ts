import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SQLITE_NOT_A_READER,
  SqliteReadPool,
  SqliteTimeBudgetError,
  isSqliteTimeBudgetError,
} from './sqlite-read-pool';
import { loadBetterSqlite3, registerSqlFunctions } from './embedded-driver';

// Never finishes: the only way it ends is the pool killing its child.
const INFINITE =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c';

interface WritableDatabase {
  exec(sql: string): void;
  close(): void;
}
const Database = createRequire(__filename)('better-sqlite3') as new (path: string) => WritableDatabase;

/** Live (not zombie) reader children of this process, by the title they give themselves. */
function readerPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(process.pid)], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(
      ([, stat, ...args]) =>
        stat !== undefined && !stat.startsWith('Z') && args.join(' ') === 'sqlite-read-pool reader',
    )
    .map(([pid]) => Number(pid));
}

/** Polls until `check` holds; only the test timeout bounds it, so a slow machine only makes it wait. */
async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe(SqliteReadPool.name, () => {
  let dir: string;
  let path: string;
  const pools: SqliteReadPool[] = [];
  const pool = (size: number, pragmas?: string[]) => {
    const created = new SqliteReadPool({ path, size, pragmas });
    pools.push(created);
    return created;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-read-pool-'));
    path = join(dir, 'stats.sqlite');
    const db = new Database(path);
    db.exec(`
      CREATE TABLE visits (id INTEGER PRIMARY KEY, path TEXT NOT NULL, ts TEXT NOT NULL);
      INSERT INTO visits (id, path, ts) VALUES
        (1, '/', '2024-05-01 10:00:00.000'),
        (2, '/pricing', '2024-05-01 12:30:00.000'),
        (3, '/', '2024-05-02 00:00:00.000');
    `);
    db.close();
  });

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns rows, binding numbers, strings and a Date as the UTC text datetimes are stored in', async () => {
    const sut = pool(1);
    const rows = await sut.select<{ id: number; path: string }>(
      'SELECT id, path FROM visits WHERE ts >= ? AND path = ? AND id > ? ORDER BY id',
      [new Date(Date.UTC(2024, 4, 1, 12, 30)), '/', 0],
      10_000,
    );
    expect(rows).toEqual([{ id: 3, path: '/' }]);
    expect(
      await sut.select(
        'SELECT count(*) AS n FROM visits WHERE ts >= ?',
        [new Date('2024-05-01T12:30:00Z')],
        10_000,
      ),
    ).toEqual([{ n: 2 }]);
  });

  it('binds booleans as 1/0, null as NULL and a bigint as an INTEGER', async () => {
    const sut = pool(1);
    const [row] = await sut.select(
      'SELECT ? AS yes, ? AS no, ? IS NULL AS wasNull, typeof(?) AS bigType, (SELECT count(*) FROM visits) > ? AS more, ? AS d',
      [true, false, null, 9007199254740993n, 2n, new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))],
      10_000,
    );
    expect(row).toEqual({
      yes: 1,
      no: 0,
      wasNull: 1,
      bigType: 'integer',
      more: 1,
      d: '2024-01-02 03:04:05.006',
    });
  });

  it('refuses parameters it cannot bind faithfully', async () => {
    const sut = pool(1);
    await expect(sut.select('SELECT ?', [undefined], 10_000)).rejects.toThrow(
      /parameter 1 has an unsupported type \(undefined\)/,
    );
    await expect(sut.select('SELECT ?, ?', [1, { a: 1 }], 10_000)).rejects.toThrow(
      /parameter 2 has an unsupported type \(Object\)/,
    );
    await expect(sut.select('SELECT ?', [NaN], 10_000)).rejects.toThrow(/not a finite number/);
    await expect(sut.select('SELECT ?', [new Date(NaN)], 10_000)).rejects.toThrow(/invalid Date/);
    await expect(sut.select('SELECT ?', [Buffer.from('x')], 10_000)).rejects.toThrow(TypeError);
  });

  it('refuses a pool size or a time budget it cannot honour', async () => {
    expect(() => new SqliteReadPool({ path, size: 0 })).toThrow(RangeError);
    const sut = pool(1);
    await expect(sut.select('SELECT 1', [], 0)).rejects.toThrow(RangeError);
    await expect(sut.select('SELECT 1', [], Number.NaN)).rejects.toThrow(RangeError);
  });

  it('applies the pragmas in every child', async () => {
    const sut = pool(1, ['busy_timeout = 1234', 'PRAGMA cache_size = -4000']);
    expect(await sut.select('PRAGMA busy_timeout', [], 10_000)).toEqual([{ timeout: 1234 }]);
    expect(await sut.select('PRAGMA cache_size', [], 10_000)).toEqual([{ cache_size: -4000 }]);
  });

  it('registers the SQL functions of every connection: md5_bytes, as registerSqlFunctions computes it', async () => {
    const memory = new (loadBetterSqlite3())(':memory:');
    registerSqlFunctions(memory);
    const expected = memory.prepare('SELECT md5_bytes(?) AS h, md5_bytes(NULL) AS n').get('/blog/é') as {
      h: Buffer;
    };
    memory.close();
    const [row] = await pool(1).select<{ h: { type: string; data: number[] }; n: null }>(
      'SELECT md5_bytes(?) AS h, md5_bytes(NULL) AS n',
      ['/blog/é'],
      10_000,
    );
    expect(Buffer.from(row.h.data)).toEqual(expected.h);
    expect(Buffer.from(row.h.data)).toEqual(createHash('md5').update('/blog/é', 'utf8').digest());
    expect(row.n).toBeNull();
  });

  it('queues statements when every child is busy and answers them all with one child', async () => {
    const sut = pool(1);
    const answers = await Promise.all([
      sut.select('SELECT count(*) AS n FROM visits', [], 10_000),
      sut.select('SELECT max(id) AS id FROM visits', [], 10_000),
    ]);
    expect(answers).toEqual([[{ n: 3 }], [{ id: 3 }]]);
    expect(readerPids()).toHaveLength(1);
  });

  it('stops a statement past its budget by killing its child, without blocking the event loop, then answers with a new child', async () => {
    const sut = pool(1);
    await sut.select('SELECT 1', [], 10_000);
    const [first] = readerPids();

    let ticks = 0;
    let pendingAtTick = false;
    let settled = false;
    // Registered before the select, so it is due before the budget timer however slow the machine is.
    const ticker = setInterval(() => {
      ticks++;
      if (!settled) pendingAtTick = true;
    }, 10);
    const outcome = sut.select(INFINITE, [], 300).finally(() => (settled = true));
    try {
      const error = await outcome.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SqliteTimeBudgetError);
      expect(isSqliteTimeBudgetError(error)).toBe(true);
      expect((error as Error).message).toBe(
        'the SQLite statement exceeded the budget of 300 ms and was stopped',
      );
    } finally {
      clearInterval(ticker);
    }
    expect(ticks).toBeGreaterThan(0);
    expect(pendingAtTick).toBe(true);

    await eventually(() => !readerPids().includes(first));
    expect(await sut.select('SELECT count(*) AS n FROM visits', [], 10_000)).toEqual([{ n: 3 }]);
    const [replacement] = readerPids();
    expect(replacement).toBeDefined();
    expect(replacement).not.toBe(first);
  });

  it('counts the time spent queued against the budget', async () => {
    const sut = pool(1);
    const running = sut.select(INFINITE, [], 60_000).catch((e: unknown) => e);
    await expect(sut.select('SELECT 1', [], 300)).rejects.toBeInstanceOf(SqliteTimeBudgetError);
    await sut.close();
    expect(await running).toEqual(new Error('the SQLite read pool was closed while the statement ran'));
  });

  it('rejects the statement of a child that dies and replaces the child', async () => {
    const sut = pool(1);
    await sut.select('SELECT 1', [], 10_000);
    const [child] = readerPids();
    const running = sut.select(INFINITE, [], 60_000);
    process.kill(child, 'SIGKILL');
    await expect(running).rejects.toThrow(/SQLite child process exited unexpectedly \(signal SIGKILL\)/);
    expect(await sut.select('SELECT 2 AS two', [], 10_000)).toEqual([{ two: 2 }]);
  });

  it('refuses writes: statements returning no rows, and writes returning rows on the read-only connection', async () => {
    const sut = pool(1);
    await expect(
      sut.select("INSERT INTO visits (path, ts) VALUES ('/x', '2024-01-01')", [], 10_000),
    ).rejects.toMatchObject({ code: SQLITE_NOT_A_READER });
    await expect(sut.select('DELETE FROM visits RETURNING id', [], 10_000)).rejects.toMatchObject({
      code: 'SQLITE_READONLY',
    });
    expect(await sut.select('SELECT count(*) AS n FROM visits', [], 10_000)).toEqual([{ n: 3 }]);
  });

  it('rejects SQLite errors as Errors keeping the SQLite code', async () => {
    const sut = pool(1);
    const error = await sut.select('SELEC id FROM visits', [], 10_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'SQLITE_ERROR', message: expect.stringMatching(/syntax error/) });
    expect(isSqliteTimeBudgetError(error)).toBe(false);
    const missing = new SqliteReadPool({ path: join(dir, 'missing.sqlite'), size: 1 });
    pools.push(missing);
    await expect(missing.select('SELECT 1', [], 10_000)).rejects.toMatchObject({ code: 'SQLITE_CANTOPEN' });
  });

  it('kills every child on close, rejects what was queued or running, and rejects later selects', async () => {
    const sut = pool(2);
    await Promise.all([sut.select('SELECT 1', [], 10_000), sut.select('SELECT 2', [], 10_000)]);
    const children = readerPids();
    expect(children).toHaveLength(2);
    const running = [sut.select(INFINITE, [], 60_000), sut.select(INFINITE, [], 60_000)].map((p) =>
      p.catch((e: unknown) => e),
    );
    const queued = sut.select('SELECT 3', [], 60_000).catch((e: unknown) => e);

    await sut.close();

    expect(await Promise.all(running)).toEqual([
      new Error('the SQLite read pool was closed while the statement ran'),
      new Error('the SQLite read pool was closed while the statement ran'),
    ]);
    expect(await queued).toEqual(new Error('the SQLite read pool was closed before the statement ran'));
    await expect(sut.select('SELECT 1', [], 10_000)).rejects.toThrow('the SQLite read pool is closed');
    expect(readerPids()).toEqual([]);
    for (const pid of children)
      expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
