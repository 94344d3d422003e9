import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopProcessGroup } from './support/process-group';
import { freePort, TEST_ENGINE } from './support/test-env';

const ROOT = path.join(__dirname, '..');

interface Demo {
  child: ChildProcess;
  stdout: string;
  exited: Promise<number | null>;
}

/** `npm run start:demo -- --no-live` with no database configured, until its banner. */
async function startDemo(env: NodeJS.ProcessEnv): Promise<Demo> {
  const child = spawn('bash', ['scripts/start-demo.sh', '--no-live'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', DB_NAME: '', API_DATABASE_URL: '', ...env },
    // Its own process group: the API and the demo traffic it starts are stopped with it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const demo: Demo = {
    child,
    stdout: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (demo.stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let done = false;
  void demo.exited.then(() => (done = true));
  const deadline = Date.now() + 240_000;
  while (!/API key:\s+\S+/.test(demo.stdout)) {
    if (done) throw new Error(`start:demo exited before its banner:\n${stderr.slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`no banner within 240 s:\n${stderr.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return demo;
}

async function stopDemo(demo: Demo | undefined): Promise<void> {
  await stopProcessGroup(demo?.child.pid, demo?.exited ?? Promise.resolve());
}

async function get<T>(port: number, key: string, url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as T };
}

// The newcomer's first command on a machine without a database server (issue #15, item 6);
// test/start-demo.e2e-spec.ts runs it against MariaDB.
(TEST_ENGINE === 'sqlite' ? describe : describe.skip)(
  'npm run start:demo with no database configured',
  () => {
    // Made in beforeAll, not here: a skipped describe (on MariaDB) still runs its body.
    let dir: string;
    let file: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'stats-demo-'));
      file = path.join(dir, 'stats.sqlite');
    });
    // Days of the 90 the demo loads, fixed for both runs (the default range moves with the clock).
    const day = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10);
    const range = `from=${day(60)}&to=${day(20)}`;
    let demo: Demo | undefined;

    afterAll(async () => {
      await stopDemo(demo);
      rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it('creates the SQLite file, loads the demo and serves it with the key it prints', async () => {
      const port = await freePort();
      demo = await startDemo({ SQLITE_PATH: file, PORT: String(port) });
      expect(existsSync(file)).toBe(true);
      const key = /API key:\s+(\S+)/.exec(demo.stdout)![1];
      const sites = await get<{ data: Array<{ id: number }> }>(port, key, '/api/v1/sites');
      expect(sites.status).toBe(200);
      expect(sites.body.data.length).toBe(2);
      const overview = await get<{ data: { sessions: number } }>(
        port,
        key,
        `/api/v1/sites/${sites.body.data[0].id}/analytics/overview`,
      );
      expect(overview.status).toBe(200);
      expect(overview.body.data.sessions).toBeGreaterThan(0);
    }, 300_000);

    it('reuses the data on a second run: the same sites and figures, and a new key', async () => {
      const firstKey = /API key:\s+(\S+)/.exec(demo!.stdout)![1];
      const port1 = Number(/localhost:(\d+)/.exec(demo!.stdout)![1]);
      const before = await get<{ data: { sessions: number } }>(
        port1,
        firstKey,
        `/api/v1/sites/1/analytics/overview?${range}`,
      );
      expect(before.body.data.sessions).toBeGreaterThan(0);
      await stopDemo(demo);
      const port = await freePort();
      demo = await startDemo({ SQLITE_PATH: file, PORT: String(port) });
      const key = /API key:\s+(\S+)/.exec(demo.stdout)![1];
      expect(key).not.toBe(firstKey);
      const after = await get<{ data: { sessions: number } }>(
        port,
        key,
        `/api/v1/sites/1/analytics/overview?${range}`,
      );
      expect(after.status).toBe(200);
      expect(after.body.data.sessions).toBe(before.body.data.sessions);
    }, 300_000);
  },
);
