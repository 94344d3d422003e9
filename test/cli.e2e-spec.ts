import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { ndjson, pageview } from './support/hits';
import { CLI_ENTRY, TestEnv } from './support/test-env';

const ROOT = path.join(__dirname, '..');
const COMMANDS = [
  'migrate',
  'users:create',
  'sites:create',
  'members:add',
  'members:remove',
  'keys:create',
  'keys:revoke',
  'keys:list',
  'events:register',
  'goals:create',
  'import',
  'aggregate',
  'demo',
  'demo:live',
];

describe('operator CLI', () => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await TestEnv.create();
  });

  afterAll(() => env.close());

  it('creates a user, a site, a membership and a key that reads the site', async () => {
    const user = await env.cli(['users:create', '--email', 'ops@test.example', '--json']);
    expect(user).toMatchObject({ code: 0, json: { id: expect.any(Number) } });
    expect(user.stdout.trim().split('\n')).toHaveLength(1);

    const site = await env.cli(['sites:create', '--name', 'Shop', '--domain', 'shop.example', '--json']);
    expect(site.code).toBe(0);
    const [row] = await env.ds.query('SELECT timezone, currency, tracking_mode FROM sites WHERE id = ?', [
      site.json!.id,
    ]);
    expect(row).toEqual({ timezone: 'UTC', currency: 'USD', tracking_mode: 'full' });

    expect(
      (
        await env.cli([
          'members:add',
          '--site',
          String(site.json!.id),
          '--user',
          String(user.json!.id),
          '--json',
        ])
      ).json,
    ).toMatchObject({
      added: true,
    });
    const key = await env.cli(['keys:create', '--user', String(user.json!.id), '--name', 'ci', '--json']);
    expect(key.json).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(/^sk_[A-Za-z0-9_-]{43}$/),
    });

    const app = await env.startApp();
    const res = await request(app.getHttpServer())
      .get('/api/v1/sites')
      .set('Authorization', `Bearer ${key.json!.key as string}`);
    expect(res.body.data.map((s: { id: number }) => s.id)).toEqual([site.json!.id]);

    const listed = await env.cli(['keys:list', '--user', String(user.json!.id), '--json']);
    expect(listed.stdout).not.toContain(key.json!.key as string);
    expect(listed.json).toEqual({
      keys: [
        expect.objectContaining({
          id: key.json!.id,
          name: 'ci',
          prefix: (key.json!.key as string).slice(0, 10),
          revoked_at: null,
        }),
      ],
    });

    expect((await env.cli(['keys:revoke', '--id', String(key.json!.id), '--json'])).code).toBe(0);
    const after = await request(app.getHttpServer())
      .get('/api/v1/sites')
      .set('Authorization', `Bearer ${key.json!.key as string}`);
    expect(after.status).toBe(401);

    const removed = await env.cli([
      'members:remove',
      '--site',
      String(site.json!.id),
      '--user',
      String(user.json!.id),
      '--json',
    ]);
    expect(removed.json).toMatchObject({ removed: true });
  });

  it('stores only a hash of a key', async () => {
    const user = await env.cli(['users:create', '--email', 'hash@test.example', '--json']);
    const key = await env.cli(['keys:create', '--user', String(user.json!.id), '--json']);
    const dump = JSON.stringify(await env.ds.query('SELECT * FROM api_keys'));
    expect(dump).not.toContain(key.json!.key as string);
    expect(dump).not.toContain((key.json!.key as string).slice(10));
  });

  it('validates site options and registers events and goals', async () => {
    const bad = await env.cli([
      'sites:create',
      '--name',
      'X',
      '--domain',
      'x.example',
      '--timezone',
      'Mars/Base',
      '--json',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--timezone');
    expect(bad.json).toEqual({ error: expect.stringContaining('--timezone') });

    const site = await env.cli([
      'sites:create',
      '--name',
      'B',
      '--domain',
      'b.example',
      '--timezone',
      'Asia/Kolkata',
      '--currency',
      'INR',
      '--tracking',
      'cookieless',
      '--json',
    ]);
    const id = String(site.json!.id);
    expect(
      (
        await env.cli([
          'events:register',
          '--site',
          id,
          '--name',
          'signup',
          '--description',
          'Sign-up',
          '--json',
        ])
      ).code,
    ).toBe(0);
    expect((await env.cli(['events:register', '--site', id, '--name', 'signup', '--json'])).code).toBe(1);
    expect(
      (await env.cli(['goals:create', '--site', id, '--name', 'Docs', '--path', '/docs/*', '--json'])).code,
    ).toBe(0);
    const both = await env.cli([
      'goals:create',
      '--site',
      id,
      '--name',
      'X',
      '--path',
      '/a',
      '--event',
      'b',
      '--json',
    ]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('exactly one of --event or --path');
    const goals = await env.ds.query('SELECT type, match_value FROM goals WHERE site_id = ?', [id]);
    expect(goals).toEqual([{ type: 'path', match_value: '/docs/*' }]);
  });

  it('fails with a clear message and non-zero exit for missing options and unknown ids', async () => {
    const missing = await env.cli(['users:create']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--email/);
    const unknown = await env.cli(['members:add', '--site', '424242', '--user', '1', '--json']);
    expect(unknown.code).toBe(1);
    expect(unknown.json).toEqual({ error: 'no site with id 424242' });
  });

  it('stops with one line naming the variable when the configuration is bad', async () => {
    const res = await env.cli(['migrate'], undefined, { DATABASE_URL: 'not-a-url' });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      'error: Configuration error: DATABASE_URL must look like mysql://user:password@host:3306/database',
    );
  });

  it('asks for `migrate` first when the database has no schema yet', async () => {
    const name = `e2e_unmigrated_${randomBytes(4).toString('hex')}`;
    const embedded = env.databaseEnv().SQLITE_PATH !== undefined;
    const file = path.join(os.tmpdir(), `${name}.sqlite`);
    const url = new URL(env.databaseEnv().DATABASE_URL || 'mysql://root@127.0.0.1:3306/x');
    url.pathname = `/${name}`;
    const target = embedded ? { SQLITE_PATH: file } : { DATABASE_URL: url.toString() };
    const hint = ': run `stats-cli migrate` first';
    try {
      if (!embedded) {
        // The server has no such database yet: `migrate` creates it.
        const absent = await env.cli(['keys:create', '--user', '1', '--json'], undefined, target);
        expect(absent.code).toBe(1);
        expect(absent.json).toEqual({ error: `Unknown database '${name}'${hint}` });
        await env.ds.query(`CREATE DATABASE ${name}`);
      }
      for (const [args, table] of [
        [['keys:create', '--user', '1', '--json'], 'users'],
        [['aggregate', '--json'], 'dirty_sessions'],
      ] as const) {
        const res = await env.cli([...args], undefined, target);
        expect(res.code).toBe(1);
        expect(String(res.json?.error)).toContain(table);
        expect(String(res.json?.error)).toMatch(/(no such table|doesn't exist)/);
        expect(String(res.json?.error).endsWith(hint)).toBe(true);
      }
    } finally {
      if (embedded) await rm(file, { force: true });
      else await env.ds.query(`DROP DATABASE IF EXISTS ${name}`);
    }
  });

  it('explains every command and option with --help, without a database', async () => {
    const all = await env.cli(['--help'], undefined, { DATABASE_URL: '' });
    expect(all.code).toBe(0);
    for (const command of COMMANDS) {
      expect(all.stdout).toContain(command);
    }
    const one = await env.cli(['sites:create', '--help'], undefined, { DATABASE_URL: '' });
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/--tracking <mode>\s+full or cookieless/);
  });

  it('starts without the packages only the HTTP API needs (every cron run of aggregate pays their loading)', async () => {
    const preload = path.join(__dirname, 'support/loaded-packages-preload.js');
    const res = await env.cli(['aggregate'], undefined, {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`.trim(),
    });
    expect(res.code).toBe(0);
    const line = /^loaded packages: (.*)$/m.exec(res.stderr);
    const loaded = JSON.parse(line![1]) as string[];
    // What the CLI does need, so that the line is known to name what the process loaded.
    expect(loaded).toEqual(expect.arrayContaining(['@nestjs/core', 'nest-commander', 'typeorm']));
    expect(
      loaded.filter((p) => ['@nestjs/swagger', '@nestjs/platform-express', 'express', 'helmet'].includes(p)),
    ).toEqual([]);
  });

  it('names itself stats-cli and lists --json in the help of the CLI and of every command', async () => {
    const all = await env.cli(['--help'], undefined, { DATABASE_URL: '' });
    expect(all.stdout).toMatch(/^Usage: stats-cli \[options\] \[command\]/);
    expect(all.stdout).toMatch(/--json\s+print exactly one JSON object on stdout/);
    for (const command of COMMANDS) {
      const help = await env.cli([command, '--help'], undefined, { DATABASE_URL: '' });
      expect({ command, code: help.code }).toEqual({ command, code: 0 });
      expect(help.stdout).toMatch(new RegExp(`^Usage: stats-cli ${command} `));
      expect(help.stdout).toMatch(/--json\s+print exactly one JSON object on stdout/);
    }
  });

  it('prints exactly one JSON object with --json through every documented way to call it', async () => {
    const user = await env.cli(['users:create', '--email', 'ways@test.example', '--json']);
    const args = ['keys:list', '--user', String(user.json!.id), '--json'];
    const run = promisify(execFile);
    const options = { cwd: ROOT, env: { ...process.env, ...env.databaseEnv() } };
    // The README documents `npm run -s cli -- …` and `node scripts/cli.js …` (and the bin, which is scripts/cli.js).
    const ways: Array<[string, string[]]> = [
      ['npm', ['run', '-s', 'cli', '--', ...args]],
      [process.execPath, [path.join(ROOT, 'scripts/cli.js'), ...args]],
    ];
    for (const [command, argv] of ways) {
      const { stdout } = await run(command, argv, options);
      expect({
        way: [command, ...argv.slice(0, 3)].join(' '),
        lines: stdout.trimEnd().split('\n').length,
      }).toEqual({
        way: [command, ...argv.slice(0, 3)].join(' '),
        lines: 1,
      });
      expect(JSON.parse(stdout)).toEqual({ keys: [] });
    }
  });

  it('demo:live keeps the demo alive: hits written as they happen, history before the 90 days, aggregated', async () => {
    const demo = await env.cli(['demo', '--days', '2', '--json']);
    expect(demo.code).toBe(0);
    const live = await env.cli([
      'demo:live',
      '--ticks',
      '3',
      '--interval',
      '1',
      '--rate',
      '600',
      '--history-days',
      '95',
      '--seed',
      '7',
      '--json',
    ]);
    expect(live).toMatchObject({ code: 0 });
    expect(live.json).toMatchObject({
      ticks: 3,
      live_sessions: expect.any(Number),
      live_hits: expect.any(Number),
      history_hits: expect.any(Number),
    });
    expect(live.json!.live_hits as number).toBeGreaterThan(0);
    expect(live.json!.history_hits as number).toBeGreaterThan(0);
    expect(live.json!.aggregated_sessions as number).toBeGreaterThan(0);
    const [recent] = await env.ds.query<Array<{ n: string }>>(
      "SELECT COUNT(*) AS n FROM hits WHERE hit_id LIKE 'l%' AND ts > ?",
      [new Date(Date.now() - 120_000)],
    );
    expect(Number(recent.n)).toBe(live.json!.live_hits);
    const [old] = await env.ds.query<Array<{ n: string }>>(
      "SELECT COUNT(*) AS n FROM hits WHERE hit_id LIKE 'y%' AND ts < ?",
      [new Date(Date.now() - 89 * 86_400_000)],
    );
    expect(Number(old.n)).toBe(live.json!.history_hits);
    // History is loaded once: a second run adds none.
    const again = await env.cli([
      'demo:live',
      '--ticks',
      '1',
      '--rate',
      '0',
      '--history-days',
      '95',
      '--json',
    ]);
    expect(again.json).toMatchObject({ history_hits: 0, live_hits: 0 });
  }, 120_000);

  it('aggregate --watch derives what each import queues, round after round, until SIGTERM', async () => {
    const refused = await env.cli(['aggregate', '--interval', '1', '--json']);
    expect(refused).toMatchObject({ code: 1, json: { error: '--interval needs --watch' } });
    const tooLong = await env.cli(['aggregate', '--watch', '--interval', '86401', '--json']);
    expect(tooLong).toMatchObject({
      code: 1,
      json: { error: '--interval must be at most 86400 seconds, got 86401' },
    });

    const user = await env.user();
    const site = await env.site({ members: [user] });
    const { key } = await env.key(user);
    // startApp() makes its app the one env.close() closes: this test closes its own and gives
    // the suite's back.
    const suiteApp = env.app;
    const app = await env.startApp();
    const overview = async () => {
      const res = await request(app.getHttpServer())
        .get(`/api/v1/sites/${site}/analytics/overview?from=2026-03-02&to=2026-03-02`)
        .set('Authorization', `Bearer ${key}`);
      expect(res.status).toBe(200);
      const { sessions, pageviews, bounce_rate } = res.body.data as Record<string, number>;
      return { sessions, pageviews, bounce_rate };
    };

    const watcher = spawn(
      process.execPath,
      [CLI_ENTRY, 'aggregate', '--watch', '--interval', '1', '--json'],
      {
        env: { ...process.env, ...env.databaseEnv(false) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    watcher.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    watcher.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => watcher.on('close', resolve));
    const lines = () =>
      stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, number | boolean>);
    const derived = () => lines().reduce((n, l) => n + Number(l.sessions ?? 0), 0);
    /** Waits (not a timing assertion: up to a minute on a busy machine) until the rounds printed derive `n` sessions. */
    const until = async (n: number) => {
      for (let waited = 0; derived() < n && waited < 60_000; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect({ derived: derived(), stderr }).toEqual({ derived: n, stderr: expect.any(String) });
    };

    try {
      // Two sessions: a bounce and one of two pageviews.
      await env.cli(
        ['import', '-', '--json'],
        ndjson([
          pageview(site, 'w-a', '2026-03-02T10:00:00Z', '/'),
          pageview(site, 'w-b', '2026-03-02T11:00:00Z', '/'),
          pageview(site, 'w-b', '2026-03-02T11:05:00Z', '/pricing'),
        ]),
      );
      await until(2);
      expect(await overview()).toEqual({ sessions: 2, pageviews: 3, bounce_rate: 50 });

      // A late hit that ends w-a's bounce, and a new session: both derived by a later round.
      await env.cli(
        ['import', '-', '--json'],
        ndjson([
          pageview(site, 'w-a', '2026-03-02T10:10:00Z', '/docs'),
          pageview(site, 'w-c', '2026-03-02T12:00:00Z', '/'),
        ]),
      );
      await until(4);
      expect(await overview()).toEqual({ sessions: 3, pageviews: 5, bounce_rate: 33.33 });
      const [queued] = await env.ds.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM dirty_sessions');
      expect(Number(queued.n)).toBe(0);
    } finally {
      watcher.kill('SIGTERM');
      await app.close();
      env.app = suiteApp;
    }
    expect(await exited).toBe(0);
    const printed = lines();
    // A line for each round that changed something or left sessions queued (the command's own
    // rule; each names its round), then the stop.
    const changed = (l: Record<string, number | boolean>) =>
      Number(l.sessions) + Number(l.sketch_hours) + Number(l.goal_sites) + Number(l.remaining) > 0;
    expect(printed.slice(0, -1).every((l) => typeof l.round === 'number' && changed(l))).toBe(true);
    expect(printed.at(-1)).toEqual({
      stopped: true,
      rounds: expect.any(Number),
      failed_rounds: 0,
      sessions: 4,
    });
    expect(printed.at(-1)!.rounds).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('migrate is idempotent', async () => {
    const res = await env.cli(['migrate', '--json']);
    expect(res).toMatchObject({ code: 0, json: { applied: [] } });
  });
});
