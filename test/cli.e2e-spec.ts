import request from 'supertest';
import { TestEnv } from './support/test-env';

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

  it('explains every command and option with --help, without a database', async () => {
    const all = await env.cli(['--help'], undefined, { DATABASE_URL: '' });
    expect(all.code).toBe(0);
    for (const command of [
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
    ]) {
      expect(all.stdout).toContain(command);
    }
    const one = await env.cli(['sites:create', '--help'], undefined, { DATABASE_URL: '' });
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/--tracking <mode>\s+full or cookieless/);
  });

  it('migrate is idempotent', async () => {
    const res = await env.cli(['migrate', '--json']);
    expect(res).toMatchObject({ code: 0, json: { applied: [] } });
  });
});
