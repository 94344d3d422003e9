import 'reflect-metadata';
import { generateApiKey } from '@app/auth';
import { AppConfig, DatabaseLocation, loadConfig } from '@app/config';
import {
  dataSourceOptions,
  dialectForServerVersion,
  dropDatabase,
  ensureDatabase,
  provisionApiAccount,
  Sql,
} from '@app/db';
import { HitImporter, ImportSummary, SessionAggregator } from '@app/ingest';
import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
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
  }

  static async create(): Promise<TestEnv> {
    const env = new TestEnv();
    await ensureDatabase(env.location);
    env.ds = new DataSource(dataSourceOptions(env.location, { poolSize: 5, connectTimeoutMs: 5000 }));
    await env.ds.initialize();
    await env.ds.runMigrations({ transaction: 'each' });
    await env.grantApiAccount();
    return env;
  }

  /** (Re)grants the API account SELECT on every table, as `migrate` does; call after adding tables. */
  async grantApiAccount(): Promise<void> {
    await provisionApiAccount(this.ds, {
      user: this.apiLocation.user,
      password: this.apiLocation.password,
      host: '%',
      database: this.location.database,
    });
  }

  /** The configuration the app under test reads; logs only errors unless TEST_LOG_LEVEL says otherwise. */
  config(overrides: NodeJS.ProcessEnv = {}): AppConfig {
    return loadConfig({
      ...process.env,
      DATABASE_URL: this.url,
      API_DATABASE_URL: this.apiUrl,
      ALLOW_PRIVILEGED_DB_USER: undefined,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
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
      DATABASE_URL: this.url,
      API_DATABASE_URL: this.apiUrl,
      ALLOW_PRIVILEGED_DB_USER: '',
      ...env,
    });
  }

  async close(): Promise<void> {
    await this.app?.close();
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
        env: { ...process.env, DATABASE_URL: this.url, ...env },
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
        resolve({ code: code ?? -1, stdout, stderr, json });
      });
      child.stdin.end(input ?? '');
    });
  }

  // ---- factories -------------------------------------------------------------------------

  async user(email = `u${++counter}-${randomBytes(3).toString('hex')}@test.example`): Promise<number> {
    const r = await this.ds.query('INSERT INTO users (email, created_at) VALUES (?, ?)', [email, new Date()]);
    return Number(r.insertId);
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
    const id = Number(r.insertId);
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
    return { id: Number(r.insertId), key: k.key };
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
    return Number(r.insertId);
  }

  async goal(siteId: number, name: string, type: 'event' | 'path', match: string): Promise<number> {
    const r = await this.ds.query(
      'INSERT INTO goals (site_id, name, type, match_value, created_at) VALUES (?, ?, ?, ?, ?)',
      [siteId, name, type, match, new Date()],
    );
    return Number(r.insertId);
  }

  private async sql(): Promise<Sql> {
    const version: Array<{ v: string }> = await this.ds.query('SELECT VERSION() AS v');
    return { dialect: dialectForServerVersion(version[0].v) } as Sql;
  }

  /** Imports hits through the real importer (validation, dedup, orders, queue). */
  async importHits(hits: object[]): Promise<ImportSummary & { rejections: string[] }> {
    const rejections: string[] = [];
    const importer = new HitImporter(this.ds, await this.sql());
    const summary = await importer.import(
      [{ name: 'test', stream: Readable.from(hits.map((h) => `${JSON.stringify(h)}\n`)) }],
      { onReject: (r) => rejections.push(`line ${r.line}: ${r.reason}`) },
    );
    return { ...summary, rejections };
  }

  async aggregate(): Promise<number> {
    return (await new SessionAggregator(this.ds, await this.sql()).run()).sessions;
  }
}
