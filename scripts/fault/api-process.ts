/** The built API as a real process: used by the e2e suites, `npm run load` and `npm run fault`. */
import { ChildProcess, execSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

const ROOT = path.join(__dirname, '../..');
export const API_ENTRY = path.join(ROOT, 'dist/apps/api/apps/api/src/main.js');
export const CLI_ENTRY = path.join(ROOT, 'dist/apps/cli/apps/cli/src/main.js');

/**
 * The Node flags the API runs with, here as in `npm start` and `npm run start:demo` (a test
 * checks they agree). Without a cap V8 sizes its heap from the host's memory (a 4 GB old space
 * on a 24 GB host) and lets garbage reach ~250 MB before collecting it, though the live heap
 * under 200 connections is ~63 MB (BENCHMARKS.md, "API memory"); capped, it collects sooner.
 */
export const API_NODE_FLAGS: readonly string[] = ['--max-old-space-size=1024'];

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

const built = new Set<string>();

function ensureBuilt(project: 'api' | 'cli', entry: string): void {
  if (built.has(project)) return;
  const sources = Math.max(
    newestSource(path.join(ROOT, `apps/${project}/src`)),
    newestSource(path.join(ROOT, 'libs')),
  );
  let builtAt = 0;
  try {
    builtAt = statSync(entry).mtimeMs;
  } catch {
    builtAt = 0;
  }
  if (builtAt < sources)
    execSync(`npx nest build ${project}`, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  built.add(project);
}

/** Builds the API (`nest build api`) unless dist/ is newer than every source file. */
export function ensureApiBuilt(): void {
  ensureBuilt('api', API_ENTRY);
}

/** Builds the CLI (`nest build cli`) unless dist/ is newer than every source file. */
export function ensureCliBuilt(): void {
  ensureBuilt('cli', CLI_ENTRY);
}

/**
 * Waits while `entry` is missing: another test run's global setup rebuilds dist/ (nest build
 * deletes its output first), and a process started in those seconds would not find it.
 */
export async function waitForBuild(entry: string, timeoutMs = 60_000): Promise<void> {
  if (existsSync(entry)) return;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(entry) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  // The entry point is written before the rest of the build is complete.
  await new Promise((r) => setTimeout(r, 2000));
}

/** Runs the built CLI with `args` and `env`; resolves with its stdout, rejects on a non-zero exit. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  ensureCliBuilt();
  await waitForBuild(CLI_ENTRY);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`cli ${args.join(' ')} exited ${code}: ${stderr}`)),
    );
  });
}

export interface ApiProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Every stdout line so far (the JSON log), and stderr's. */
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code (null when killed by a signal) once the process ended. */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the built API (dist/) with `env` on a free port and waits until /health/live answers:
 * the production entry point, main.ts included, as an operator runs it.
 */
export async function startApiProcess(
  env: NodeJS.ProcessEnv,
  options: { timeoutMs?: number; discardStdout?: boolean } = {},
): Promise<ApiProcess> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  ensureApiBuilt();
  await waitForBuild(API_ENTRY);
  const port = Number(env.PORT ?? (await freePort()));
  const child = spawn(process.execPath, [...API_NODE_FLAGS, API_ENTRY], {
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env, PORT: String(port) },
    // A load test's log is millions of lines: the API still writes them, nobody keeps them.
    stdio: ['ignore', options.discardStdout ? 'ignore' : 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const collect = (into: string[]) => {
    let partial = '';
    return (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      into.push(...lines);
    };
  };
  child.stdout?.on('data', collect(stdout));
  child.stderr?.on('data', collect(stderr));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let running = true;
  void exited.then(() => (running = false));
  const url = `http://127.0.0.1:${port}`;
  const handle: ApiProcess = {
    url,
    port,
    child,
    stdout,
    stderr,
    exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      if (running) child.kill(signal);
      return exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!running) throw new Error(`the API exited during boot:\n${stderr.join('\n')}\n${stdout.join('\n')}`);
    try {
      if ((await fetch(`${url}/health/live`)).ok) return handle;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await handle.stop('SIGKILL');
  throw new Error(`the API did not start within ${timeoutMs} ms:\n${stderr.join('\n')}`);
}

/**
 * The URL of a read-only API account for the database of `databaseUrl`, named `user`, with a
 * fresh password: `migrate` run with it as API_DATABASE_URL creates the account (or resets its
 * password) and grants it SELECT. The API refuses to run as a user that can write.
 */
export function readOnlyApiUrl(databaseUrl: string, user: string): string {
  const url = new URL(databaseUrl);
  url.username = user;
  url.password = randomBytes(18).toString('base64url');
  return url.toString();
}
