import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { IMPORT_WRITERS } from '@app/ingest/importer';
import { event, ndjson, pageview, purchase } from './support/hits';
import { CLI_ENTRY, TEST_ENGINE, TestEnv } from './support/test-env';

describe('import and aggregate (the real CLI)', () => {
  let env: TestEnv;
  let site: number;
  let dir: string;

  beforeAll(async () => {
    env = await TestEnv.create();
    site = await env.site({ timezone: 'UTC', currency: 'USD' });
    dir = mkdtempSync(path.join(tmpdir(), 'stats-import-'));
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await env.close();
  });

  const count = async (table: string) =>
    Number((await env.ds.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
  const file = (name: string, content: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, content);
    return p;
  };

  it('is idempotent: the same file twice gives the same counts', async () => {
    const hits = [
      pageview(site, 'idem-1', '2026-03-01T10:00:00Z', '/'),
      pageview(site, 'idem-1', '2026-03-01T10:01:00Z', '/pricing'),
      event(site, 'idem-1', '2026-03-01T10:02:00Z', 'signup'),
      purchase(site, 'idem-2', '2026-03-01T11:00:00Z', 'order-idem', '10.50', {
        items: [{ sku: 'A', name: 'A', quantity: 2, price: '5.25' }],
      }),
    ];
    const f = file('idem.ndjson', ndjson(hits));
    const first = await env.cli(['import', f, '--json']);
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ lines: 4, imported: 4, duplicates: 0, rejected: 0, orders: 1 });
    const before = {
      hits: await count('hits'),
      orders: await count('orders'),
      items: await count('order_items'),
    };
    const second = await env.cli(['import', f, '--json']);
    expect(second.code).toBe(0);
    expect(second.json).toMatchObject({ lines: 4, imported: 0, duplicates: 4, rejected: 0, orders: 0 });
    expect({
      hits: await count('hits'),
      orders: await count('orders'),
      items: await count('order_items'),
    }).toEqual(before);
    expect(before).toEqual({ hits: 4, orders: 1, items: 1 });
  });

  it('stores the good lines, reports each bad line with its number and exits 2', async () => {
    const good1 = pageview(site, 'bad-1', '2026-03-02T10:00:00Z', '/a');
    const good2 = pageview(site, 'bad-1', '2026-03-02T10:00:05Z', '/b');
    const lines = [
      JSON.stringify(good1),
      '{not json',
      JSON.stringify(pageview(999999, 'bad-x', '2026-03-02T10:00:00Z', '/')),
      JSON.stringify(
        purchase(site, 'bad-2', '2026-03-02T10:00:00Z', 'eur-order', '5.00', { currency: 'EUR' }),
      ),
      JSON.stringify(pageview(site, 'bad-3', '2026-03-02T10:00:00Z', '/', { scroll_depth: 101 })),
      JSON.stringify({ ...pageview(site, 'bad-4', '2026-03-02T10:00:00Z', '/'), path: undefined }),
      JSON.stringify(purchase(site, 'bad-5', '2026-03-02T10:00:00Z', 'o-3dec', '1.005')),
      JSON.stringify(pageview(site, 'bad-6', '2026-02-30T10:00:00Z', '/')),
      JSON.stringify(good2),
    ];
    const before = await count('hits');
    const res = await env.cli(['import', file('bad.ndjson', lines.join('\n') + '\n'), '--json']);
    expect(res.code).toBe(2);
    expect(res.json).toMatchObject({ lines: 9, imported: 2, rejected: 7 });
    const reported = res.stderr.trim().split('\n');
    expect(reported).toEqual([
      'line 2: malformed JSON',
      'line 3: site 999999 does not exist',
      "line 4: currency EUR differs from the site's currency USD",
      'line 5: scroll_depth must be an integer 0–100',
      'line 6: path is required',
      expect.stringMatching(/^line 7: revenue must be ≥ 0 with at most 2 decimals/),
      'line 8: ts is not a valid calendar date and time',
    ]);
    expect(await count('hits')).toBe(before + 2);
    expect(await count('orders')).toBe(1);
  });

  it('reads stdin with -', async () => {
    const res = await env.cli(
      ['import', '-', '--json'],
      ndjson([pageview(site, 'stdin-1', '2026-03-03T10:00:00Z', '/')]),
    );
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ imported: 1 });
  });

  it('keeps the first imported purchase of an order id', async () => {
    const res = await env.cli([
      'import',
      file(
        'dup-order.ndjson',
        ndjson([
          purchase(site, 'dup-1', '2026-03-04T10:00:00Z', 'order-dup', '20.00'),
          purchase(site, 'dup-1', '2026-03-04T10:05:00Z', 'order-dup', '99.00'),
        ]),
      ),
      '--json',
    ]);
    expect(res.json).toMatchObject({ imported: 2, orders: 1 });
    const [order] = await env.ds.query(
      `SELECT ${env.decimalSql('revenue', 2)} AS revenue FROM orders WHERE order_id = 'order-dup'`,
    );
    expect(order.revenue).toBe('20.00');
  });

  it('writes batches several at a time, and the first line of a hit id or an order id still wins', async () => {
    const wide = await env.site({ timezone: 'UTC', currency: 'USD' });
    // 2,500 lines: three batches. Batches 1 and 2 share a hit id and an order id (so the second
    // waits for the first); batch 3 shares nothing and is written beside batch 2.
    const lines: Array<Record<string, unknown>> = Array.from({ length: 2500 }, (_, i) =>
      pageview(wide, `kw-s${i % 50}`, `2026-03-06T10:${String(i % 60).padStart(2, '0')}:00Z`, `/p${i % 7}`, {
        id: `kw-${i}`,
        time_on_page_seconds: (i % 9) + 0.25,
        scroll_depth: i % 101,
      }),
    );
    lines[10] = pageview(wide, 'kw-s10', '2026-03-06T10:10:00Z', '/first', { id: 'kw-dup' });
    lines[1010] = pageview(wide, 'kw-s10', '2026-03-06T10:11:00Z', '/second', { id: 'kw-dup' });
    lines[20] = purchase(wide, 'kw-s20', '2026-03-06T10:20:00Z', 'kw-order', '11.00', { id: 'kw-buy-1' });
    lines[1020] = purchase(wide, 'kw-s20', '2026-03-06T10:21:00Z', 'kw-order', '99.00', { id: 'kw-buy-2' });
    const res = await env.cli(['import', file('keyed.ndjson', ndjson(lines)), '--json']);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ lines: 2500, imported: 2499, duplicates: 1, rejected: 0, orders: 1 });
    const [dup] = await env.ds.query('SELECT path FROM hits WHERE site_id = ? AND hit_id = ?', [
      wide,
      'kw-dup',
    ]);
    expect(dup.path).toBe('/first');
    const [order] = await env.ds.query(
      `SELECT hit_id, ${env.decimalSql('revenue', 2)} AS revenue FROM orders WHERE site_id = ? AND order_id = ?`,
      [wide, 'kw-order'],
    );
    expect(order).toEqual({ hit_id: 'kw-buy-1', revenue: '11.00' });
    // The pageview rollup kept at import holds every stored pageview once, read back by batch.
    const totals = (inner: string) =>
      env.ds.query(`SELECT pv, timed, ${env.decimalSql('seconds', 3)} AS seconds, deep FROM (${inner}) t`, [
        wide,
      ]);
    const [rollup] = await totals(
      `SELECT SUM(pageviews) AS pv, SUM(timed_pageviews) AS timed, SUM(time_on_page_seconds) AS seconds,
         SUM(scroll_75_100) AS deep FROM hit_rollups WHERE site_id = ?`,
    );
    const [raw] = await totals(
      `SELECT COUNT(*) AS pv, COUNT(time_on_page_seconds) AS timed, SUM(time_on_page_seconds) AS seconds,
         SUM(CASE WHEN scroll_depth >= 75 THEN 1 ELSE 0 END) AS deep FROM hits WHERE site_id = ? AND type = 'pageview'`,
    );
    const numbers = (r: Record<string, unknown>) => Object.values(r).map(String);
    expect(numbers(rollup)).toEqual(numbers(raw));
    // And the figures themselves, from the lines: every pageview line but the duplicate.
    const stored = lines.filter((l, i) => l.type === 'pageview' && i !== 1010) as Array<{
      time_on_page_seconds?: number;
      scroll_depth?: number;
    }>;
    expect(Number(raw.pv)).toBe(stored.length);
    expect(raw.seconds).toBe(stored.reduce((s, l) => s + (l.time_on_page_seconds ?? 0), 0).toFixed(3));
    expect(Number(raw.deep)).toBe(stored.filter((l) => (l.scroll_depth ?? 0) >= 75).length);
  });

  it('looks a batch of several sites up at once: an id known on one site is new on another', async () => {
    const other = await env.site({ timezone: 'UTC', currency: 'USD' });
    const third = await env.site({ timezone: 'UTC', currency: 'USD' });
    const known = await env.cli([
      'import',
      file(
        'sites-1.ndjson',
        ndjson([
          pageview(site, 'ms-1', '2026-03-05T10:00:00Z', '/', { id: 'ms-a' }),
          purchase(site, 'ms-1', '2026-03-05T10:01:00Z', 'ms-order', '5.00', { id: 'ms-b' }),
        ]),
      ),
      '--json',
    ]);
    expect(known.json).toMatchObject({ imported: 2, orders: 1 });
    // One batch, three sites, the same hit and order ids on each of them.
    const res = await env.cli([
      'import',
      file(
        'sites-2.ndjson',
        ndjson(
          [site, other, third].flatMap((s) => [
            pageview(s, 'ms-1', '2026-03-05T10:00:00Z', '/', { id: 'ms-a', time_on_page_seconds: 4 }),
            purchase(s, 'ms-1', '2026-03-05T10:01:00Z', 'ms-order', '7.00', { id: 'ms-b' }),
            pageview(s, 'ms-1', '2026-03-05T10:02:00Z', '/x', { id: 'ms-c', time_on_page_seconds: 6 }),
          ]),
        ),
      ),
      '--json',
    ]);
    expect(res.json).toMatchObject({ lines: 9, imported: 7, duplicates: 2, rejected: 0, orders: 2 });
    const stored = await env.ds.query(
      `SELECT site_id, COUNT(*) AS n FROM hits WHERE site_id IN (?, ?, ?) AND hit_id LIKE 'ms-%' GROUP BY site_id ORDER BY site_id`,
      [site, other, third],
    );
    expect(stored.map((r: { site_id: number; n: number }) => [Number(r.site_id), Number(r.n)])).toEqual([
      [site, 3],
      [other, 3],
      [third, 3],
    ]);
    const orders = await env.ds.query(
      `SELECT site_id, ${env.decimalSql('revenue', 2)} AS revenue FROM orders WHERE order_id = 'ms-order' ORDER BY site_id`,
    );
    expect(orders.map((r: { site_id: number; revenue: string }) => [Number(r.site_id), r.revenue])).toEqual([
      [site, '5.00'],
      [other, '7.00'],
      [third, '7.00'],
    ]);
    // Each site's pageview rollup holds its own stored pageviews, each once.
    for (const s of [site, other, third]) {
      const [rollup] = await env.ds.query(
        'SELECT SUM(pageviews) AS pv, SUM(timed_pageviews) AS timed FROM hit_rollups WHERE site_id = ?',
        [s],
      );
      const [raw] = await env.ds.query(
        `SELECT COUNT(*) AS pv, COUNT(time_on_page_seconds) AS timed FROM hits WHERE site_id = ? AND type = 'pageview'`,
        [s],
      );
      expect([Number(rollup.pv), Number(rollup.timed)]).toEqual([Number(raw.pv), Number(raw.timed)]);
      if (s !== site) expect([Number(rollup.pv), Number(rollup.timed)]).toEqual([2, 2]);
    }
  });

  it('derives a site with more queued sessions than one IN list holds, in parts of one transaction', async () => {
    // 1,900 sessions of one site in one chunk: three parts (MAX_IN_LIST). Each visitor has a
    // session in the first part and one in the last, so the visitors table and the new-visitor
    // rollup are changed by two parts of the same transaction.
    const big = await env.site({ timezone: 'UTC', currency: 'USD' });
    const hits = Array.from({ length: 1900 }, (_, i) =>
      pageview(
        big,
        `many-${String(i).padStart(4, '0')}`,
        `2026-03-06T${String(10 + (i % 2)).padStart(2, '0')}:00:00Z`,
        '/',
        {
          visitor_id: `mv-${i % 950}`,
        },
      ),
    );
    expect(await env.importHits(hits)).toMatchObject({ imported: 1900, rejected: 0 });
    await env.aggregate();
    const one = async (query: string) =>
      Number(Object.values((await env.ds.query(query, [big]))[0] as object)[0]);
    expect(await one('SELECT COUNT(*) AS n FROM sessions WHERE site_id = ?')).toBe(1900);
    expect(await one('SELECT COUNT(*) AS n FROM visitors WHERE site_id = ?')).toBe(950);
    expect(await one('SELECT SUM(visitors) AS n FROM visitor_first_rollups WHERE site_id = ?')).toBe(950);
    // Visitor k's sessions (k and k + 950) start at 10:00 when k is even, 11:00 when odd.
    const firsts = await env.ds.query<Array<{ visitors: number | string }>>(
      'SELECT visitors FROM visitor_first_rollups WHERE site_id = ? ORDER BY bucket',
      [big],
    );
    expect(firsts.map((r) => Number(r.visitors))).toEqual([475, 475]);
    expect(
      await one("SELECT SUM(sessions) AS n FROM session_rollups WHERE site_id = ? AND dimension = 'country'"),
    ).toBe(1900);
    expect(await one('SELECT COUNT(*) AS n FROM dirty_sessions WHERE site_id = ?')).toBe(0);
  });

  it('derives sessions, and late out-of-order hits extend them on the next aggregate', async () => {
    const s = 'late-1';
    await env.cli([
      'import',
      file('late-a.ndjson', ndjson([pageview(site, s, '2026-03-05T10:10:00Z', '/middle')])),
      '--json',
    ]);
    const agg1 = await env.cli(['aggregate', '--json']);
    expect(agg1.code).toBe(0);
    const [before] = await env.ds.query(
      `SELECT *, ${env.decimalSql('duration_seconds', 3)} AS duration_seconds FROM sessions WHERE session_id = ?`,
      [s],
    );
    expect(before).toMatchObject({
      hits: 1,
      pageviews: 1,
      is_bounce: 1,
      entry_path: '/middle',
      exit_path: '/middle',
      duration_seconds: '0.000',
    });

    // An earlier hit with other attributes, and a later event, arrive in a second import.
    await env.cli([
      'import',
      file(
        'late-b.ndjson',
        ndjson([
          event(site, s, '2026-03-05T10:20:00Z', 'signup'),
          pageview(site, s, '2026-03-05T10:00:00Z', '/landing', {
            channel: 'Email',
            source: 'newsletter',
            country: 'DE',
          }),
        ]),
      ),
      '--json',
    ]);
    const agg2 = await env.cli(['aggregate', '--json']);
    expect(agg2.json).toMatchObject({ sessions: 1 });
    const [after] = await env.ds.query(
      `SELECT *, ${env.decimalSql('duration_seconds', 3)} AS duration_seconds FROM sessions WHERE session_id = ?`,
      [s],
    );
    expect(after).toMatchObject({
      hits: 3,
      pageviews: 2,
      events: 1,
      is_bounce: 0,
      entry_path: '/landing',
      exit_path: '/middle',
      // 10:00:00 → 10:20:00
      duration_seconds: '1200.000',
      channel: 'Email',
      source: 'newsletter',
      country: 'DE',
      device: '(unknown)',
      browser: '(unknown)',
    });
    expect(after.started_at.toISOString()).toBe('2026-03-05T10:00:00.000Z');

    const again = await env.cli(['aggregate', '--json']);
    expect(again.json).toMatchObject({ sessions: 0 });
  });

  it("keeps each visitor's first session as sessions are added, start earlier or change visitor", async () => {
    const own = await env.site({ timezone: 'UTC', currency: 'USD' });
    /** The visitors table against its definition, and the new-visitor rollup against the table. */
    const firsts = async () => {
      const stored: Array<{ visitor_id: string; first_session_at: Date }> = await env.ds.query(
        'SELECT visitor_id, first_session_at FROM visitors WHERE site_id = ? ORDER BY visitor_id',
        [own],
      );
      const sessions: Array<{ visitor_id: string; started_at: Date }> = await env.ds.query(
        'SELECT visitor_id, started_at FROM sessions WHERE site_id = ?',
        [own],
      );
      const earliest = new Map<string, number>();
      for (const s of sessions) {
        const at = new Date(s.started_at).getTime();
        earliest.set(s.visitor_id, Math.min(at, earliest.get(s.visitor_id) ?? at));
      }
      expect(stored.map((r) => [r.visitor_id, new Date(r.first_session_at).getTime()])).toEqual(
        [...earliest].sort(([a], [b]) => (a < b ? -1 : 1)),
      );
      const rollup: Array<{ bucket: Date; visitors: number | string }> = await env.ds.query(
        'SELECT bucket, visitors FROM visitor_first_rollups WHERE site_id = ? AND visitors <> 0 ORDER BY bucket',
        [own],
      );
      const byQuarter = new Map<number, number>();
      for (const at of earliest.values()) {
        const q = Math.floor(at / 900_000) * 900_000;
        byQuarter.set(q, (byQuarter.get(q) ?? 0) + 1);
      }
      expect(rollup.map((r) => [new Date(r.bucket).getTime(), Number(r.visitors)])).toEqual(
        [...byQuarter].sort(([a], [b]) => a - b),
      );
      return Object.fromEntries(
        stored.map((r) => [r.visitor_id, new Date(r.first_session_at).toISOString()]),
      );
    };
    const step = async (hits: object[]) => {
      expect(await env.importHits(hits)).toMatchObject({ rejected: 0 });
      await env.aggregate();
      return firsts();
    };
    const pv = (session: string, visitor: string, ts: string) =>
      pageview(own, session, ts, '/', { visitor_id: visitor });

    expect(
      await step([pv('f-1', 'fv-a', '2026-03-07T10:00:00Z'), pv('f-2', 'fv-b', '2026-03-07T11:00:00Z')]),
    ).toEqual({ 'fv-a': '2026-03-07T10:00:00.000Z', 'fv-b': '2026-03-07T11:00:00.000Z' });
    // A later session of a returning visitor, a new visitor, and a session that grew at its end.
    expect(
      await step([
        pv('f-3', 'fv-a', '2026-03-07T12:00:00Z'),
        pv('f-4', 'fv-c', '2026-03-07T12:30:00Z'),
        pv('f-2', 'fv-b', '2026-03-07T11:10:00Z'),
      ]),
    ).toEqual({
      'fv-a': '2026-03-07T10:00:00.000Z',
      'fv-b': '2026-03-07T11:00:00.000Z',
      'fv-c': '2026-03-07T12:30:00.000Z',
    });
    // A late hit makes fv-b's session start earlier, into another quarter hour.
    expect(await step([pv('f-2', 'fv-b', '2026-03-07T10:40:00Z')])).toMatchObject({
      'fv-b': '2026-03-07T10:40:00.000Z',
    });
    // An earlier hit of f-1 from another visitor: the session is now fv-d's (its first hit's),
    // and fv-a's first session is f-3, later than before.
    expect(await step([pv('f-1', 'fv-d', '2026-03-07T09:50:00Z')])).toEqual({
      'fv-a': '2026-03-07T12:00:00.000Z',
      'fv-b': '2026-03-07T10:40:00.000Z',
      'fv-c': '2026-03-07T12:30:00.000Z',
      'fv-d': '2026-03-07T09:50:00.000Z',
    });
  });

  it('breaks timestamp ties by import order for the first hit and the exit page', async () => {
    const s = 'tie-1';
    await env.importHits([
      pageview(site, s, '2026-03-06T10:00:00Z', '/first', { channel: 'A' }),
      pageview(site, s, '2026-03-06T10:00:00Z', '/second', { channel: 'B' }),
    ]);
    await env.aggregate();
    const [row] = await env.ds.query(
      'SELECT entry_path, exit_path, channel FROM sessions WHERE session_id = ?',
      [s],
    );
    expect(row).toEqual({ entry_path: '/first', exit_path: '/second', channel: 'A' });
  });

  it('leaves whole batches after a crash mid-import, and a re-run completes it without duplicates', async () => {
    const big = Array.from({ length: 30_000 }, (_, i) =>
      pageview(site, `crash-${i % 3000}`, '2026-03-07T10:00:00Z', `/p${i}`),
    );
    const f = file('big.ndjson', ndjson(big));
    const base = await count('hits');
    const child = spawn(process.execPath, [CLI_ENTRY, 'import', f, '--json'], {
      env: { ...process.env, ...env.databaseEnv() },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.on('exit', r));
    for (let i = 0; i < 400 && (await count('hits')) === base; i++)
      await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGKILL');
    await exited;
    const afterCrash = (await count('hits')) - base;
    // Only whole batches of 1000 lines were committed.
    expect(afterCrash % 1000).toBe(0);

    const rerun = await env.cli(['import', f, '--json']);
    expect(rerun.code).toBe(0);
    expect(rerun.json).toMatchObject({
      lines: 30_000,
      imported: 30_000 - afterCrash,
      duplicates: afterCrash,
    });
    expect((await count('hits')) - base).toBe(30_000);
  });
});

/**
 * On the MySQL family `import` stores hits with LOAD DATA LOCAL (libs/ingest/src/bulk-load.ts),
 * whose lines escape what would end a field or a line; SQLite INSERTs them. Either way a value
 * is stored exactly as the line had it.
 */
describe('import stores every value as sent', () => {
  let env: TestEnv;
  let site: number;

  beforeAll(async () => {
    env = await TestEnv.create();
    site = await env.site({ timezone: 'UTC', currency: 'USD' });
  });

  afterAll(() => env.close());

  const awkward = [
    'tab\there',
    'line\nbreak',
    'carriage\rreturn',
    'back\\slash',
    '\\N',
    'NULL',
    `quote's "double"`,
    '100% _wild_',
    'emoji 😀',
    'trailing  ',
    // SQLite's text functions stop at a NUL; MariaDB keeps it, and LOAD DATA must escape it.
    ...(TEST_ENGINE === 'sqlite' ? [] : ['nul\u0000byte']),
  ];
  /** Statements the server ran, of every connection: no other suite runs beside this one. */
  const statements = async () => {
    const rows: Array<{ Variable_name: string; Value: string }> = await env.ds.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_load', 'Com_rollback')",
    );
    return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
  };
  const storedValues = async (session: string) => {
    const rows: Array<{ hit_id: string; path: string; source: string; browser: string | null }> =
      await env.ds.query(
        'SELECT hit_id, path, source, browser FROM hits WHERE site_id = ? AND session_id = ? ORDER BY seq',
        [site, session],
      );
    return rows.map((r) => ({ ...r }));
  };
  /** Runs `work` with the server's local_infile set to `on` (MariaDB), then puts it back as it was. */
  const withLocalInfile = async <T>(on: boolean, work: () => Promise<T>): Promise<T> => {
    if (TEST_ENGINE === 'sqlite') return work();
    const [{ Value: setting }] = await env.ds.query("SHOW GLOBAL VARIABLES LIKE 'local_infile'");
    await env.ds.query(`SET GLOBAL local_infile = ${on ? 1 : 0}`);
    try {
      return await work();
    } finally {
      await env.ds.query(`SET GLOBAL local_infile = ${setting === 'ON' ? 1 : 0}`);
    }
  };
  const hitsOf = (session: string) =>
    awkward.map((text, i) =>
      pageview(site, session, `2026-05-01T10:00:${String(i).padStart(2, '0')}.25Z`, `/${text}`, {
        id: `${session} ${text}`,
        source: text,
      }),
    );
  const expected = (session: string) =>
    awkward.map((text) => ({ hit_id: `${session} ${text}`, path: `/${text}`, source: text, browser: null }));

  it('keeps tabs, line breaks, backslashes, "\\N", quotes and trailing spaces in ids, paths and attributes', async () => {
    const before = TEST_ENGINE === 'sqlite' ? {} : await statements();
    const result = await withLocalInfile(true, () => env.importHits(hitsOf('odd')));
    expect(result).toMatchObject({ imported: awkward.length, rejected: 0, rejections: [] });
    expect(await storedValues('odd')).toEqual(expected('odd'));
    if (TEST_ENGINE === 'sqlite') return;
    // One LOAD DATA stored the batch: no warning sent it back to INSERT (a rolled-back attempt).
    const after = await statements();
    expect({
      loads: after.Com_load - before.Com_load,
      rollbacks: after.Com_rollback - before.Com_rollback,
    }).toEqual({
      loads: 1,
      rollbacks: 0,
    });
    const [{ ms }] = await env.ds.query(
      `SELECT COUNT(*) AS ms FROM hits WHERE site_id = ? AND session_id = 'odd' AND ts = ?`,
      [site, new Date('2026-05-01T10:00:03.250Z')],
    );
    expect(Number(ms)).toBe(1);
  });

  it('loads a batch without looking its ids up, and a file imported again is looked up, not loaded', async () => {
    // 5,000 lines, five batches, every hit new; then the same lines with 1,000 new ones after them.
    const lines = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        pageview(
          site,
          `again-${i % 300}`,
          `2026-05-02T${String(10 + (i % 12)).padStart(2, '0')}:00:00Z`,
          `/a${i % 9}`,
          {
            id: `again-${i}`,
            time_on_page_seconds: (i % 7) + 0.5,
          },
        ),
      );
    const pageviews = async () => {
      const sums = (inner: string, ...params: unknown[]) =>
        env.ds.query(`SELECT n, ${env.decimalSql('s', 3)} AS s FROM (${inner}) t`, params);
      const [r] = await sums(
        `SELECT COUNT(*) AS n, SUM(time_on_page_seconds) AS s FROM hits WHERE site_id = ? AND session_id LIKE 'again-%'`,
        site,
      );
      const [k] = await sums(
        `SELECT SUM(pageviews) AS n, SUM(time_on_page_seconds) AS s FROM hit_rollups
         WHERE site_id = ? AND bucket >= ? AND bucket < ?`,
        site,
        new Date('2026-05-02T00:00:00Z'),
        new Date('2026-05-03T00:00:00Z'),
      );
      return { hits: [Number(r.n), r.s], rollup: [Number(k.n), k.s] };
    };
    const before = TEST_ENGINE === 'sqlite' ? {} : await statements();
    expect(await env.importHits(lines(5000))).toMatchObject({ imported: 5000, duplicates: 0, rejected: 0 });
    const middle = TEST_ENGINE === 'sqlite' ? {} : await statements();
    const once = await pageviews();
    // The time on page of the first n lines, as the database sums it.
    const seconds = (n: number) =>
      Array.from({ length: n }, (_, i) => (i % 7) + 0.5)
        .reduce((sum, t) => sum + t, 0)
        .toFixed(3);
    expect(once).toEqual({ hits: [5000, seconds(5000)], rollup: [5000, seconds(5000)] });

    expect(await env.importHits(lines(6000))).toMatchObject({
      imported: 1000,
      duplicates: 5000,
      rejected: 0,
    });
    expect(await pageviews()).toEqual({ hits: [6000, seconds(6000)], rollup: [6000, seconds(6000)] });
    if (TEST_ENGINE === 'sqlite') return;
    const after = await statements();
    const delta = (a: Record<string, number>, b: Record<string, number>) => ({
      loads: b.Com_load - a.Com_load,
      rollbacks: b.Com_rollback - a.Com_rollback,
    });
    // Each new batch one load, with no look-up to fall back on and nothing rolled back.
    expect(delta(before, middle)).toEqual({ loads: 5, rollbacks: 0 });
    // Again: the batches begun before the first of them found its hits all stored load and skip
    // them (at most IMPORT_WRITERS); the others look their ids up, and only the new batch loads.
    const again = delta(middle, after);
    expect(again.rollbacks).toBe(0);
    expect(again.loads).toBeGreaterThanOrEqual(2);
    expect(again.loads).toBeLessThanOrEqual(IMPORT_WRITERS + 1);
  });

  // Skipped on SQLite: it has no LOAD DATA and no server setting to refuse it; it always INSERTs.
  (TEST_ENGINE === 'sqlite' ? it.skip : it)(
    'INSERTs the hits when the server refuses LOAD DATA LOCAL (local_infile=OFF)',
    async () => {
      const result = await withLocalInfile(false, () => env.importHits(hitsOf('off')));
      expect(result).toMatchObject({ imported: awkward.length, rejected: 0, rejections: [] });
      expect(await storedValues('off')).toEqual(expected('off'));
      const [{ q }] = await env.ds.query(
        `SELECT COUNT(*) AS q FROM dirty_sessions WHERE site_id = ? AND session_id = 'off'`,
        [site],
      );
      expect(Number(q)).toBe(1);
    },
  );
});
