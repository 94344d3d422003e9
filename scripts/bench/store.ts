/**
 * Where a benchmark run keeps its data, per engine: a database of its own on a MariaDB/MySQL
 * server (with the read-only API account `migrate` creates), or an embedded SQLite file.
 */
import { loadBetterSqlite3 } from '@app/db';
import { rmSync } from 'node:fs';
import { createConnection, RowDataPacket } from 'mysql2/promise';
import { readOnlyApiUrl } from '../fault/api-process';

export interface EngineDescription {
  name: 'mariadb' | 'sqlite';
  version: string;
  /** The settings that decide ingest and report speed, as the engine reports them. */
  settings: Record<string, string>;
  /** One line for the log and the report. */
  summary: string;
}

export interface BenchStore {
  /** The database's name, or the SQLite file. */
  readonly name: string;
  /** Variables pointing the CLI (and the in-process operator modules) at it. */
  readonly env: NodeJS.ProcessEnv;
  /** Variables pointing the API at it (on a server: its read-only account). */
  readonly apiEnv: NodeJS.ProcessEnv;
  describe(): Promise<EngineDescription>;
  /** Rows of the loaded tables: all of them, and the big site's. */
  counts(siteId: number): Promise<Record<string, number>>;
  /** Deletes the data (and the API account). */
  drop(): Promise<void>;
  /** Deletes the API account this run made (a server's), keeping the data. */
  dropApiAccount(): Promise<void>;
  close(): Promise<void>;
}

/** MariaDB settings that decide ingest and report speed. */
const SERVER_SETTINGS = [
  'innodb_buffer_pool_size',
  'innodb_log_file_size',
  'innodb_log_buffer_size',
  'innodb_flush_log_at_trx_commit',
  'innodb_flush_method',
  'innodb_io_capacity',
  'innodb_doublewrite',
  'innodb_adaptive_hash_index',
  'sync_binlog',
  'log_bin',
  'max_connections',
  'tmp_table_size',
  'max_heap_table_size',
  'sort_buffer_size',
  'join_buffer_size',
  'optimizer_switch',
];

const COUNTS = (table: (name: string) => string) =>
  `SELECT (SELECT COUNT(*) FROM ${table('hits')}) AS hits,
          (SELECT COUNT(*) FROM ${table('hits')} WHERE site_id = ?) AS site_hits,
          (SELECT COUNT(*) FROM ${table('sessions')}) AS sessions,
          (SELECT COUNT(*) FROM ${table('sessions')} WHERE site_id = ?) AS site_sessions,
          (SELECT COUNT(*) FROM ${table('orders')} WHERE site_id = ?) AS site_orders`;

const numbers = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));

/** A database `database` of its own on the server at `server` (a mysql:// URL without a database). */
export async function serverStore(server: string, database: string): Promise<BenchStore> {
  const url = new URL(server);
  const admin = await createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    multipleStatements: false,
  });
  url.pathname = `/${database}`;
  const dbUrl = url.toString();
  // The API runs as the read-only account `migrate` creates (it refuses a user that can write).
  const apiUrl = readOnlyApiUrl(dbUrl, `bench_api_${Date.now().toString(36)}`);
  const dropApiAccount = async () => {
    await admin.query('DROP USER IF EXISTS ?@?', [new URL(apiUrl).username, '%']);
  };
  return {
    name: database,
    env: { DATABASE_URL: dbUrl, API_DATABASE_URL: apiUrl },
    apiEnv: { DATABASE_URL: dbUrl, API_DATABASE_URL: apiUrl },
    async describe() {
      const [[version]] = await admin.query<RowDataPacket[]>('SELECT VERSION() AS v');
      const [rows] = await admin.query<RowDataPacket[]>(
        `SHOW GLOBAL VARIABLES WHERE Variable_name IN (${SERVER_SETTINGS.map(() => '?').join(',')})`,
        SERVER_SETTINGS,
      );
      const settings = Object.fromEntries(rows.map((r) => [String(r.Variable_name), String(r.Value)]));
      return {
        name: 'mariadb',
        version: String(version.v),
        settings,
        summary:
          `MariaDB ${String(version.v)}: innodb_buffer_pool_size ${settings.innodb_buffer_pool_size}, ` +
          `innodb_log_file_size ${settings.innodb_log_file_size}, ` +
          `innodb_flush_log_at_trx_commit ${settings.innodb_flush_log_at_trx_commit}`,
      };
    },
    async counts(siteId) {
      const [rows] = await admin.query<RowDataPacket[]>(
        COUNTS((t) => `\`${database}\`.${t}`),
        [siteId, siteId, siteId],
      );
      return numbers(rows[0]);
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await dropApiAccount();
    },
    dropApiAccount,
    async close() {
      await admin.end();
    },
  };
}

/** The embedded engine's file at `file` (created by `migrate`). */
export function sqliteStore(file: string): BenchStore {
  const Database = loadBetterSqlite3();
  const env = { DATABASE_URL: '', DB_NAME: '', API_DATABASE_URL: '', SQLITE_PATH: file };
  const read = <T>(fn: (db: InstanceType<typeof Database>) => T): T => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    name: file,
    env,
    apiEnv: env,
    describe() {
      const memory = new Database(':memory:');
      const version = (memory.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
      memory.close();
      // What the CLI's connection (TypeORM's better-sqlite3 driver, WAL) and the read pool run with.
      const settings = read((db) =>
        Object.fromEntries(
          ['journal_mode', 'synchronous', 'cache_size', 'page_size', 'mmap_size', 'temp_store'].map((p) => [
            p,
            String(db.pragma(p, { simple: true })),
          ]),
        ),
      );
      return Promise.resolve({
        name: 'sqlite',
        version,
        settings,
        summary:
          `SQLite ${version} (better-sqlite3): journal_mode ${settings.journal_mode}, synchronous ${settings.synchronous}, ` +
          `cache_size ${settings.cache_size}, page_size ${settings.page_size}`,
      });
    },
    counts(siteId) {
      return Promise.resolve(
        read((db) =>
          numbers(db.prepare(COUNTS((t) => t)).get(siteId, siteId, siteId) as Record<string, unknown>),
        ),
      );
    },
    drop() {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      return Promise.resolve();
    },
    dropApiAccount: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}
