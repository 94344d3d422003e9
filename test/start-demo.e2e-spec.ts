import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createConnection, RowDataPacket } from 'mysql2/promise';
import { API_NODE_FLAGS } from '../scripts/fault/api-process';
import { stopProcessGroup } from './support/process-group';
import { describeOnServer, freePort } from './support/test-env';

const ROOT = path.join(__dirname, '..');

/**
 * `npm run start:demo` as a newcomer runs it, against a database of its own on the test server:
 * the API it starts connects as the read-only account that `migrate` creates, not as the
 * operator's user (issue #12, item 7), and the banner with a working key comes once the API
 * answers (issue #13, item 7). `--no-live`: no live visitors, so the figures stay still.
 */
// Against MariaDB (DATABASE_URL set); test/start-demo-embedded.e2e-spec.ts runs it with none.
describeOnServer('npm run start:demo', () => {
  const server = new URL(process.env.TEST_DATABASE_URL || 'mysql://root@127.0.0.1:3306');
  const database = `stats_demo_${process.pid}_${Date.now().toString(36)}`;
  const apiUser = `${database}_api`.slice(0, 32);
  let child: ChildProcess | undefined;
  let exited: Promise<number | null>;
  let stdout = '';
  let stderr = '';
  let port = 0;

  const admin = () =>
    createConnection({
      host: server.hostname,
      port: Number(server.port || 3306),
      user: decodeURIComponent(server.username || 'root'),
      password: decodeURIComponent(server.password),
    });

  beforeAll(async () => {
    port = await freePort();
    const url = new URL(server.toString());
    url.pathname = `/${database}`;
    child = spawn('bash', ['scripts/start-demo.sh', '--no-live'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url.toString(), API_DATABASE_URL: '', PORT: String(port) },
      // Its own process group: the API and the demo traffic it starts are stopped with it.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    exited = new Promise((resolve) => child!.on('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    const deadline = Date.now() + 240_000;
    while (!/API key:\s+\S+/.test(stdout)) {
      if (done) throw new Error(`start:demo exited before its banner:\n${stderr.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`no banner within 240 s:\n${stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 300_000);

  afterAll(async () => {
    await stopProcessGroup(child?.pid, exited);
    const conn = await admin();
    try {
      await conn.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await conn.query('DROP USER IF EXISTS ?@?', [apiUser, '%']);
    } finally {
      await conn.end();
    }
  }, 30_000);

  it('prints the banner once the API answers, with a key that reads the demo sites', async () => {
    const key = /API key:\s+(\S+)/.exec(stdout)![1];
    expect(stdout).toContain(`Swagger UI:  http://localhost:${port}/api/docs`);
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/sites`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ id: number }> };
    expect(body.data.length).toBeGreaterThan(0);
    const overview = await fetch(
      `http://127.0.0.1:${port}/api/v1/sites/${body.data[0].id}/analytics/overview`,
      {
        headers: { Authorization: `Bearer ${key}` },
      },
    );
    expect(overview.status).toBe(200);
    expect(((await overview.json()) as { data: { sessions: number } }).data.sessions).toBeGreaterThan(0);
  });

  it('runs the API with the heap cap of `npm start` (API_NODE_FLAGS), read back from /metrics', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const limit = Number(/^nodejs_heap_size_limit_bytes (\d+)/m.exec(metrics)?.[1]);
    const capMb = Number(/--max-old-space-size=(\d+)/.exec(API_NODE_FLAGS.join(' '))![1]);
    const packageJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(packageJson.scripts.start).toBe(
      `node ${API_NODE_FLAGS.join(' ')} dist/apps/api/apps/api/src/main.js`,
    );
    // The old space's cap plus the young generation's semi-spaces; uncapped it is ~4 GB on a 24 GB host.
    expect(limit).toBeGreaterThanOrEqual(capMb * 2 ** 20);
    expect(limit).toBeLessThan((capMb + 128) * 2 ** 20);
  });

  it("runs the API as the read-only account `migrate` created, never as the operator's user", async () => {
    const conn = await admin();
    try {
      // The API's pooled connections to the demo database, after the requests above.
      const [rows] = await conn.query<RowDataPacket[]>(
        'SELECT DISTINCT USER AS user FROM information_schema.PROCESSLIST WHERE DB = ?',
        [database],
      );
      expect(rows.map((r) => String(r.user))).toContain(apiUser);
      const [grants] = await conn.query<RowDataPacket[]>('SHOW GRANTS FOR ?@?', [apiUser, '%']);
      // SELECT on single tables, and the one column write of the API (a key's last use).
      const lines = grants
        .map((g) => String(Object.values(g)[0]))
        .filter((l) => !l.startsWith('GRANT USAGE'));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        expect(line).toMatch(/^GRANT SELECT(, UPDATE \(`last_used_at`\))? ON `[^`]+`\.`[^`]+` TO /);
      expect(lines.filter((l) => l.includes('UPDATE'))).toEqual([expect.stringContaining('.`api_keys` TO')]);
    } finally {
      await conn.end();
    }
  });
});
