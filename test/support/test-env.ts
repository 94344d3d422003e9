import 'reflect-metadata';
import { generateApiKey } from '@app/auth';
import { AppConfig, DatabaseLocation, loadConfig } from '@app/config';
import {
  dataSourceOptions,
  dialectOf,
  dropDatabase,
  embeddedDataSourceOptions,
  embeddedEngineLine,
  ensureDatabase,
  DecimalScale,
  provisionApiAccount,
  Sql,
  SqlDialect,
} from '@app/db';
import { AggregateSummary, HitImporter, ImportSummary, SessionAggregator } from '@app/ingest';
import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { DataSource } from 'typeorm';
import { AppModule } from '../../apps/api/src/app.module';
import { configureApp } from '../../apps/api/src/configure-app';
import { ApiProcess, startApiProcess, waitForBuild } from '../../scripts/fault/api-process';

export { API_ENTRY, ensureApiBuilt, freePort, startApiProcess } from '../../scripts/fault/api-process';
export type { ApiProcess } from '../../scripts/fault/api-process';

const ROOT = path.join(__dirname, '../..');
export const CLI_ENTRY = path.join(ROOT, 'dist/apps/cli/apps/cli/src/main.js');

function serverLocation(): Omit<DatabaseLocation, 'database'> {
  const url = new URL(process.env.TEST_DATABASE_URL || 'mysql://root@127.0.0.1:3306/test');
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
  };
}

export function urlOf(location: DatabaseLocation): string {
  const auth = location.password
    ? `${encodeURIComponent(location.user)}:${encodeURIComponent(location.password)}`
    : encodeURIComponent(location.user);
  return `mysql://${auth}@${location.host}:${location.port}/${location.database}`;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown> | undefined;
}

let counter = 0;

/**
 * The engine the e2e suites run on: `TEST_ENGINE=sqlite` gives each suite an embedded SQLite
 * file of its own instead of a MariaDB database (npm test runs the suites on both).
 */
export const TEST_ENGINE: 'mariadb' | 'sqlite' = process.env.TEST_ENGINE === 'sqlite' ? 'sqlite' : 'mariadb';
const embedded = TEST_ENGINE === 'sqlite';

/**
 * `describe` / `it` of what only a database server has (accounts, replicas, server faults,
 * locks held by another session): skipped on the embedded engine, each call site saying why.
 */
export const describeOnServer = embedded ? describe.skip : describe;
export const itOnServer = embedded ? it.skip : it;

/** The id an INSERT gave its row: mysql2 answers {insertId}, better-sqlite3 the rowid. */
const insertedId = (r: unknown): number =>
  Number(typeof r === 'object' && r !== null ? (r as { insertId: number }).insertId : r);

/**
 * One fresh, migrated database per suite, the admin DataSource on it, factories for test
 * data, the real importer and aggregator, and the real app built from AppModule.
 *
 * The app connects as the suite's own read-only API account, provisioned as `migrate` does
 * (the API refuses to run as a user that can write). Database users are server-wide, so each
 * suite has a user of its own, named after its database, dropped with it: suites running in
 * parallel, here or in another checkout, never share or reset one another's account.
 */
export class TestEnv {
  readonly location: DatabaseLocation;
  readonly url: string;
  /** The read-only API account of this suite. */
  readonly apiLocation: DatabaseLocation;
  readonly apiUrl: string;
  /** With TEST_ENGINE=sqlite: the suite's SQLite file. */
  readonly sqlitePath: string | undefined;
  ds!: DataSource;
  app?: INestApplication;

  private constructor() {
    counter++;
    const name = `stats_e2e_${process.pid}_${Date.now().toString(36)}_${counter}_${randomBytes(2).toString('hex')}`;
    this.location = { ...serverLocation(), database: name };
    this.url = urlOf(this.location);
    this.apiLocation = {
      ...this.location,
      user: `e2e_api_${randomBytes(6).toString('hex')}`,
      password: randomBytes(18).toString('base64url'),
    };
    this.apiUrl = urlOf(this.apiLocation);
    this.sqlitePath = embedded ? path.join(os.tmpdir(), `${name}.sqlite`) : undefined;
  }

  /** The variables that point a process (the app, the CLI, the built API) at this suite's database. */
  databaseEnv(api = false): NodeJS.ProcessEnv {
    if (this.sqlitePath)
      return { DATABASE_URL: '', DB_NAME: '', API_DATABASE_URL: '', SQLITE_PATH: this.sqlitePath };
    return { DATABASE_URL: this.url, ...(api ? { API_DATABASE_URL: this.apiUrl } : {}) };
  }

  static async create(): Promise<TestEnv> {
    const env = new TestEnv();
    if (env.sqlitePath) {
      env.ds = new DataSource(embeddedDataSourceOptions(env.sqlitePath));
    } else {
      await ensureDatabase(env.location);
      env.ds = new DataSource(dataSourceOptions(env.location, { poolSize: 5, connectTimeoutMs: 5000 }));
    }
    await env.ds.initialize();
    await env.ds.runMigrations({ transaction: 'each' });
    await env.grantApiAccount();
    return env;
  }

  /**
   * Undoes the migration whose name `name` matches and every one after it (a database as it was
   * before that migration, with the data it holds).
   */
  async undoMigrationsFrom(name: RegExp): Promise<void> {
    const order = this.ds.migrations.map((m) => m.name ?? m.constructor.name);
    const first = order.findIndex((n) => name.test(n));
    if (first < 0) throw new Error(`no migration named ${String(name)}`);
    for (let i = first; i < order.length; i++) await this.ds.undoLastMigration();
  }

  /** Runs the migration `name` matches and every one after it again, on the data the database holds. */
  async migrateAgainFrom(name: RegExp): Promise<void> {
    await this.undoMigrationsFrom(name);
    await this.ds.runMigrations();
    await this.grantApiAccount();
  }

  /** (Re)grants the API account SELECT on every table, as `migrate` does; call after adding tables. */
  async grantApiAccount(): Promise<void> {
    // The embedded engine has no accounts: the API opens the file read-only.
    if (this.sqlitePath) return;
    await provisionApiAccount(this.ds, {
      user: this.apiLocation.user,
      password: this.apiLocation.password,
      host: '%',
      database: this.location.database,
    });
  }

  get dialect(): SqlDialect {
    return dialectOf(this.ds);
  }

  /** The tables of this suite's database. */
  async tableNames(): Promise<string[]> {
    const rows: Array<{ name: string }> = this.sqlitePath
      ? await this.ds.query("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await this.ds.query(
          'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
          [this.location.database],
        );
    return rows.map((r) => r.name);
  }

  /** SQL reading a stored exact decimal column as its decimal string, on either engine. */
  decimalSql(column: string, scale: DecimalScale): string {
    return sql`${this.dialect.decimalText(sql.ref(column), scale)}`.compile(this.dialect.builder).sql;
  }

  /**
   * The configuration the app under test reads; logs only errors unless TEST_LOG_LEVEL says
   * otherwise.
   *
   * The app under test shares this process's event loop with the suite: a test's own work (the
   * contract check of every response after each test, a fixture's import) can hold it for more
   * than the default 500 ms DB_CONNECT_TIMEOUT_MS, and a health ping or a new pooled connection
   * timed out behind it. The monitor then answered the next request 503 (CI, once each in the
   * sketch and auth suites). No in-process suite tests an outage (those run the API as a process
   * of its own, reliability-database), so the app here waits 10 s unless a suite says otherwise.
   */
  config(overrides: NodeJS.ProcessEnv = {}): AppConfig {
    return loadConfig({
      ...process.env,
      ...this.databaseEnv(true),
      ALLOW_PRIVILEGED_DB_USER: undefined,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
      DB_CONNECT_TIMEOUT_MS: '10000',
      ...overrides,
    });
  }

  /** The real application: AppModule with every global guard, pipe and filter, plus configureApp(). */
  async startApp(
    overrides: NodeJS.ProcessEnv = {},
    options: { imports?: Array<Type | DynamicModule> } = {},
  ): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule, ...(options.imports ?? [])] })
      .overrideProvider(AppConfig)
      .useValue(this.config(overrides))
      .compile();
    // As main.ts creates it: no body parser (every route is a GET).
    const app = moduleRef.createNestApplication({ logger: ['error'], bodyParser: false });
    configureApp(app);
    try {
      await app.init();
    } catch (e) {
      // A refused boot (a privileged database user) must not leave its pool open behind it.
      await app.close().catch(() => undefined);
      throw e;
    }
    this.app = app;
    return app;
  }

  /** The built API as a real process on this database (see startApiProcess). */
  spawnApi(env: NodeJS.ProcessEnv = {}): Promise<ApiProcess> {
    return startApiProcess({
      ...this.databaseEnv(true),
      ALLOW_PRIVILEGED_DB_USER: '',
      ...env,
    });
  }

  async close(): Promise<void> {
    await this.app?.close();
    if (this.sqlitePath) {
      if (this.ds?.isInitialized) await this.ds.destroy();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.sqlitePath}${suffix}`, { force: true });
      return;
    }
    if (this.ds?.isInitialized) {
      await this.ds.query('DROP USER IF EXISTS ?@?', [this.apiLocation.user, '%']);
      await this.ds.destroy();
    }
    await dropDatabase(this.location);
  }

  /** Runs the built CLI as a real process against this database. */
  async cli(args: string[], input?: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    await waitForBuild(CLI_ENTRY);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
        env: { ...process.env, ...this.databaseEnv(false), ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        let json: Record<string, unknown> | undefined;
        try {
          json = JSON.parse(stdout) as Record<string, unknown>;
        } catch {
          json = undefined;
        }
        // The embedded engine's start line is the same for every command (cli.e2e-spec checks it).
        const engineLine = this.sqlitePath ? `${embeddedEngineLine(this.sqlitePath)}\n` : undefined;
        if (engineLine && stderr.startsWith(engineLine)) stderr = stderr.slice(engineLine.length);
        resolve({ code: code ?? -1, stdout, stderr, json });
      });
      child.stdin.end(input ?? '');
    });
  }

  // ---- factories -------------------------------------------------------------------------

  async user(email = `u${++counter}-${randomBytes(3).toString('hex')}@test.example`): Promise<number> {
    const r = await this.ds.query('INSERT INTO users (email, created_at) VALUES (?, ?)', [email, new Date()]);
    return insertedId(r);
  }

  async site(
    o: {
      name?: string;
      timezone?: string;
      currency?: string;
      tracking?: 'full' | 'cookieless';
      members?: number[];
    } = {},
  ): Promise<number> {
    const r = await this.ds.query(
      'INSERT INTO sites (name, domain, timezone, currency, tracking_mode, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      [
        o.name ?? 'Site',
        'site.example',
        o.timezone ?? 'UTC',
        o.currency ?? 'USD',
        o.tracking ?? 'full',
        new Date(),
      ],
    );
    const id = insertedId(r);
    for (const userId of o.members ?? []) await this.member(id, userId);
    return id;
  }

  async member(siteId: number, userId: number): Promise<void> {
    await this.ds.query('INSERT INTO memberships (site_id, user_id, created_at) VALUES (?, ?, ?)', [
      siteId,
      userId,
      new Date(),
    ]);
  }

  async removeMember(siteId: number, userId: number): Promise<void> {
    await this.ds.query('DELETE FROM memberships WHERE site_id = ? AND user_id = ?', [siteId, userId]);
  }

  /** Creates a key the way keys:create does and returns the secret. */
  async key(
    userId: number,
    o: { expiresAt?: Date; revoked?: boolean } = {},
  ): Promise<{ id: number; key: string }> {
    const k = generateApiKey();
    const r = await this.ds.query(
      'INSERT INTO api_keys (user_id, name, prefix, key_hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [userId, 'test', k.prefix, k.hash, new Date(), o.expiresAt ?? null, o.revoked ? new Date() : null],
    );
    return { id: insertedId(r), key: k.key };
  }

  async registerEvent(
    siteId: number,
    name: string,
    description: string | null = null,
    at = new Date(),
  ): Promise<number> {
    const r = await this.ds.query(
      'INSERT INTO registered_events (site_id, name, description, registered_at) VALUES (?, ?, ?, ?)',
      [siteId, name, description, at],
    );
    return insertedId(r);
  }

  async goal(siteId: number, name: string, type: 'event' | 'path', match: string): Promise<number> {
    const r = await this.ds.query(
      'INSERT INTO goals (site_id, name, type, match_value, created_at) VALUES (?, ?, ?, ?, ?)',
      [siteId, name, type, match, new Date()],
    );
    return insertedId(r);
  }

  private sql(): Sql {
    return { dialect: dialectOf(this.ds) } as Sql;
  }

  /** Imports hits through the real importer (validation, dedup, orders, queue). */
  async importHits(hits: object[]): Promise<ImportSummary & { rejections: string[] }> {
    const rejections: string[] = [];
    const importer = new HitImporter(this.ds, this.sql());
    const summary = await importer.import(
      [{ name: 'test', stream: Readable.from(hits.map((h) => `${JSON.stringify(h)}\n`)) }],
      { onReject: (r) => rejections.push(`line ${r.line}: ${r.reason}`) },
    );
    return { ...summary, rejections };
  }

  async aggregate(): Promise<number> {
    return (await this.aggregateRun()).sessions;
  }

  /** `aggregate` as the CLI runs it, with everything it did. */
  aggregateRun(): Promise<AggregateSummary> {
    return this.aggregator().run();
  }

  /** The aggregator `aggregate` runs, on this database. */
  aggregator(): SessionAggregator {
    return new SessionAggregator(this.ds, this.sql());
  }
}
