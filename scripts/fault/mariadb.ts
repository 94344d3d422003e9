import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { freePort } from './api-process';

const MARIADBD = process.env.MARIADBD ?? '/usr/sbin/mariadbd';
const INSTALL_DB = process.env.MARIADB_INSTALL_DB ?? 'mariadb-install-db';

/**
 * A MariaDB server of our own, in a temporary data directory on a free port, that a test can
 * stop, kill, freeze and start again without touching the shared server. Grant tables are
 * skipped: root connects without a password, which is all a fault test needs.
 */
export class PrivateMariaDb {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'stats-mariadb-'));
  private child: ChildProcess | undefined;
  port = 0;

  private constructor(private readonly serverArgs: readonly string[]) {}

  /** `serverArgs`: more mariadbd options, e.g. a binary log and a server id for replication. */
  static async create(serverArgs: readonly string[] = []): Promise<PrivateMariaDb> {
    const db = new PrivateMariaDb(serverArgs);
    db.port = await freePort();
    execFileSync(
      INSTALL_DB,
      [
        '--no-defaults',
        `--datadir=${db.dir}/data`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        '--user=root',
      ],
      { stdio: 'ignore' },
    );
    return db;
  }

  /** mysql://… URL of `database` on this server. */
  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server and resolves once it accepts connections; returns that moment (ms). */
  async start(timeoutMs = 30_000): Promise<number> {
    if (this.running) throw new Error('already running');
    this.child = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${this.dir}/data`,
        `--socket=${this.dir}/mysqld.sock`,
        `--pid-file=${this.dir}/mysqld.pid`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        '--skip-grant-tables',
        '--skip-name-resolve',
        '--user=root',
        '--innodb-buffer-pool-size=64M',
        '--innodb-log-file-size=16M',
        ...this.serverArgs,
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error('mariadbd exited during start');
      if (await this.answers()) return Date.now();
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`mariadbd did not accept connections within ${timeoutMs} ms`);
  }

  /** Stops the server (SIGTERM: clean shutdown; SIGKILL: crash) and waits for it to exit. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (signal === 'SIGKILL') child.kill('SIGCONT');
    child.kill(signal);
    await exited;
  }

  /** SIGSTOP: the server keeps its sockets open and answers nothing, like a frozen host. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Runs statements as root on this server (no database selected) and returns the last one's rows. */
  async sql<Row = Record<string, unknown>>(...statements: string[]): Promise<Row[]> {
    const c = await createConnection({ host: '127.0.0.1', port: this.port, user: 'root' });
    try {
      let rows: unknown = [];
      for (const statement of statements) [rows] = await c.query(statement);
      return rows as Row[];
    } finally {
      await c.end();
    }
  }

  async answers(): Promise<boolean> {
    try {
      const c = await createConnection({
        host: '127.0.0.1',
        port: this.port,
        user: 'root',
        connectTimeout: 500,
      });
      await c.end();
      return true;
    } catch {
      return false;
    }
  }

  async destroy(): Promise<void> {
    this.thaw();
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
