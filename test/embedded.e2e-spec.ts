import { EMBEDDED_ENGINE_UNAVAILABLE, embeddedEngineLine } from '@app/db';
import type { INestApplication } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { API_ENTRY, ApiProcess, CLI_ENTRY, ensureApiBuilt, TEST_ENGINE, TestEnv } from './support/test-env';

/** A preload that makes better-sqlite3 impossible to load, as on a machine where it could not be built. */
const WITHOUT_BETTER_SQLITE3 = path.join(__dirname, 'support/without-better-sqlite3.js');

// What only the embedded engine does; every other suite runs on it too when TEST_ENGINE=sqlite.
(TEST_ENGINE === 'sqlite' ? describe : describe.skip)('the embedded SQLite engine', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let keyId: number;
  let site: number;
  let api: ApiProcess | undefined;

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    ({ key, id: keyId } = await env.key(user));
    app = await env.startApp();
  });

  afterAll(async () => {
    await api?.stop('SIGKILL');
    await env.close();
  });

  it('says which engine the CLI runs on, first on stderr, and how to choose MariaDB', () => {
    const res = spawnSync(process.execPath, [CLI_ENTRY, 'aggregate', '--json'], {
      env: { ...process.env, ...env.databaseEnv() },
      encoding: 'utf8',
    });
    expect(res.status).toBe(0);
    expect(res.stderr.split('\n')[0]).toBe(
      `embedded SQLite at ${env.sqlitePath}; set DATABASE_URL for MariaDB/MySQL`,
    );
    expect(JSON.parse(res.stdout)).toMatchObject({ sessions: 0 });
  });

  it('says so in the built API log, and serves reports from the file', async () => {
    api = await env.spawnApi();
    expect(api.stdout.join('\n')).toContain(embeddedEngineLine(env.sqlitePath!));
    const res = await fetch(
      `${api.url}/api/v1/sites/${site}/analytics/overview?from=2026-01-01&to=2026-01-31`,
      {
        headers: { Authorization: `Bearer ${key}` },
      },
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { sessions: number } }).data.sessions).toBe(0);
  });

  it("opens the API's connection read-only: a write fails in the database itself", async () => {
    const ds = app.get(DataSource);
    await expect(ds.query("UPDATE sites SET name = 'owned'")).rejects.toMatchObject({
      driverError: expect.objectContaining({ code: 'SQLITE_READONLY' }),
    });
    const [row] = await env.ds.query('SELECT name FROM sites WHERE id = ?', [site]);
    expect(row.name).toBe('Site');
  });

  it('still records when a key was last used, through a handle of its own', async () => {
    const res = await request(app.getHttpServer()).get('/api/v1/sites').set('Authorization', `Bearer ${key}`);
    expect(res.status).toBe(200);
    const [row] = await env.ds.query('SELECT last_used_at FROM api_keys WHERE id = ?', [keyId]);
    expect(row.last_used_at).toBeInstanceOf(Date);
  });

  describe('on a machine where better-sqlite3 could not be built', () => {
    const run = (entry: string, args: string[]) =>
      spawnSync(process.execPath, ['--require', WITHOUT_BETTER_SQLITE3, entry, ...args], {
        env: { ...process.env, ...env.databaseEnv(), NODE_OPTIONS: '' },
        encoding: 'utf8',
        timeout: 30_000,
      });

    it('stops the CLI with one line telling the user to set DATABASE_URL', () => {
      const res = run(CLI_ENTRY, ['migrate']);
      expect(res.status).toBe(1);
      expect(res.stderr.trim()).toBe(`error: ${EMBEDDED_ENGINE_UNAVAILABLE}`);
    });

    it('stops the API with that line before it listens', () => {
      ensureApiBuilt();
      const res = run(API_ENTRY, []);
      expect(res.status).toBe(1);
      expect(res.stderr.trim()).toBe(EMBEDDED_ENGINE_UNAVAILABLE);
      expect(res.stdout).toBe('');
    });
  });
});
