import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { pageview } from './support/hits';
import { documentedRoutes } from './support/routes';
import { PrivilegedDatabaseUserError } from '@app/db';
import { spawn } from 'node:child_process';
import { API_ENTRY, ensureApiBuilt, freePort, describeOnServer, TestEnv, urlOf } from './support/test-env';

// Database accounts and grants: the embedded engine has none (its API connection is opened
// read-only: test/embedded.e2e-spec.ts).
describeOnServer("The API's database user is read-only by construction (migrate)", () => {
  let env: TestEnv;
  let app: INestApplication;
  let apiDs: DataSource;
  let site: number;
  let key: { id: number; key: string };
  const apiUser = `stats_ro_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  let apiUrl: string;

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    key = await env.key(user);
    await env.importHits([pageview(site, 's1', new Date().toISOString(), '/')]);
    await env.aggregate();
    apiUrl = urlOf({ ...env.location, user: apiUser, password });
  });

  afterAll(async () => {
    await env.ds.query('DROP USER IF EXISTS ?@?', [apiUser, '%']);
    await env.close();
  });

  const migrate = () => env.cli(['migrate', '--json'], undefined, { API_DATABASE_URL: apiUrl });

  it('creates the user with SELECT on the tables the API reads and UPDATE on api_keys.last_used_at only', async () => {
    const first = await migrate();
    expect(first.code).toBe(0);
    expect(first.json).toEqual({
      applied: [],
      api_user: {
        user: apiUser,
        host: '%',
        select: expect.arrayContaining(['api_keys', 'hits', 'memberships', 'sessions', 'sites']),
        update: ['api_keys.last_used_at'],
        revoked: [],
      },
    });
    const select = (first.json!.api_user as { select: string[] }).select;
    expect(select).not.toContain('users');
    expect(select).not.toContain('migrations');
    const grants: Array<Record<string, string>> = await env.ds.query('SHOW GRANTS FOR ?@?', [apiUser, '%']);
    const text = grants.map((g) => Object.values(g)[0]).join('\n');
    expect(text).not.toMatch(/INSERT|DELETE|ALL PRIVILEGES|CREATE|DROP/);
    expect(text).toMatch(/UPDATE \(`last_used_at`\) ON `[^`]+`\.`api_keys`/);
  });

  it('converges when run again: the same grants, and anything granted since is revoked', async () => {
    await env.ds.query('GRANT INSERT, DELETE ON ??.hits TO ?@?', [env.location.database, apiUser, '%']);
    await env.ds.query('GRANT UPDATE (revoked_at) ON ??.api_keys TO ?@?', [
      env.location.database,
      apiUser,
      '%',
    ]);
    const again = await migrate();
    expect(again.code).toBe(0);
    expect((again.json!.api_user as { revoked: string[] }).revoked.sort()).toEqual([
      'DELETE ON hits',
      'INSERT ON hits',
      'UPDATE (revoked_at) ON api_keys',
    ]);
    const third = await migrate();
    expect((third.json!.api_user as { revoked: string[] }).revoked).toEqual([]);
  });

  describe('the API connected as that user', () => {
    beforeAll(async () => {
      app = await env.startApp({ API_DATABASE_URL: apiUrl });
      apiDs = app.get(DataSource);
    });

    it('serves every documented route and records last_used_at', async () => {
      for (const route of documentedRoutes(app)) {
        const res = await request(app.getHttpServer())
          .get(route.url(site))
          .set('Authorization', `Bearer ${key.key}`);
        expect({ route: route.template, status: res.status }).toEqual({ route: route.template, status: 200 });
      }
      await new Promise((r) => setTimeout(r, 100));
      const [row] = await env.ds.query('SELECT last_used_at AS t FROM api_keys WHERE id = ?', [key.id]);
      expect(row.t).toBeInstanceOf(Date);
    });

    it.each([
      [
        'INSERT INTO hits (site_id, hit_id, type, ts, session_id, visitor_id) VALUES (1, "x", "event", NOW(), "s", "v")',
        'ER_TABLEACCESS_DENIED_ERROR',
      ],
      ['UPDATE sites SET name = "owned"', 'ER_TABLEACCESS_DENIED_ERROR'],
      ['DELETE FROM memberships', 'ER_TABLEACCESS_DENIED_ERROR'],
      ['DELETE FROM api_keys', 'ER_TABLEACCESS_DENIED_ERROR'],
      ['UPDATE api_keys SET revoked_at = NULL, expires_at = NULL', 'ER_COLUMNACCESS_DENIED_ERROR'],
      ['SELECT email FROM users', 'ER_TABLEACCESS_DENIED_ERROR'],
      ['DROP TABLE sessions', 'ER_TABLEACCESS_DENIED_ERROR'],
      ['CREATE TABLE owned (id INT)', 'ER_TABLEACCESS_DENIED_ERROR'],
    ])('cannot run %s', async (sql, code) => {
      await expect(apiDs.query(sql)).rejects.toMatchObject({
        driverError: expect.objectContaining({ code }),
      });
    });

    it('can still write the one column it needs', async () => {
      await expect(
        apiDs.query('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [new Date(), key.id]),
      ).resolves.toMatchObject({ affectedRows: 1 });
    });
  });

  describe('least privilege by default', () => {
    /** The built API started as an operator would, as the admin (root) user; resolves when it exits or listens. */
    const runAsAdmin = async (extra: NodeJS.ProcessEnv) => {
      ensureApiBuilt();
      const child = spawn(process.execPath, [API_ENTRY], {
        env: {
          ...process.env,
          DATABASE_URL: env.url,
          API_DATABASE_URL: '',
          ALLOW_PRIVILEGED_DB_USER: '',
          PORT: String(await freePort()),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
          ...extra,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => {
        child.on('exit', (c) => resolve(c));
        const poll = setInterval(() => {
          if (stdout.includes('listening on')) {
            clearInterval(poll);
            child.kill('SIGTERM');
          }
        }, 100);
        child.on('exit', () => clearInterval(poll));
      });
      return { code, stdout, stderr };
    };

    it('refuses to start as a user that can write, with one line naming the way out', async () => {
      const run = await runAsAdmin({});
      expect(run.code).toBe(1);
      const lines = run.stderr.split('\n').filter((l) => l.trim());
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^Refusing to start: the API's database user root@\S+ can write \(.+\)\. Set API_DATABASE_URL to the read-only account .*ALLOW_PRIVILEGED_DB_USER=true/,
      );
      expect(run.stdout).not.toContain('listening on');
    });

    it('starts as that user when ALLOW_PRIVILEGED_DB_USER=true says so, with a warning', async () => {
      const run = await runAsAdmin({ ALLOW_PRIVILEGED_DB_USER: 'true' });
      expect(run.stdout).toContain('listening on');
      expect(run.stdout).toMatch(/"level":"warn".*can write .*allowed by ALLOW_PRIVILEGED_DB_USER=true/);
    });

    it('fails the in-process boot too (the app under test above runs as the read-only account)', async () => {
      await expect(env.startApp({ API_DATABASE_URL: env.url })).rejects.toBeInstanceOf(
        PrivilegedDatabaseUserError,
      );
    });
  });

  it('leaves the API on the admin user when API_DATABASE_URL is not a user of its own', async () => {
    const plain = await env.cli(['migrate', '--json']);
    expect(plain.json).toEqual({ applied: [], api_user: null });
  });
});
