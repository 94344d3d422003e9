import type { AppConfig } from '@app/config';
import { OnApplicationShutdown } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import type BetterSqlite3 from 'better-sqlite3';
import { embeddedSqliteDriver } from './embedded-driver';
import { SqliteReadPool } from './sqlite-read-pool';

/**
 * The API's report reads on the embedded engine: better-sqlite3 runs a statement to its end
 * on the calling thread and cannot be interrupted, so reports read through a pool of child
 * processes holding read-only connections, one statement each at a time; a statement over
 * the time budget is stopped by killing its process (ReportDb answers 503), and the event
 * loop never waits on SQLite. One process per core (each is a Node process of ~50 MB).
 */
export class EmbeddedReads implements OnApplicationShutdown {
  private readonly pool: SqliteReadPool;

  constructor(file: string, size: number) {
    this.pool = new SqliteReadPool({ path: file, size, pragmas: ['busy_timeout = 5000'] });
  }

  /** A provider's value: the reads of the configured embedded engine, or null on a server. */
  static fromConfig(config: AppConfig): EmbeddedReads | null {
    if (!config.embedded) return null;
    return new EmbeddedReads(
      config.embedded.path,
      Math.max(1, Math.min(config.dbPoolSize, availableParallelism())),
    );
  }

  select<Row>(sql: string, params: unknown[], budgetMs: number): Promise<Row[]> {
    return this.pool.select<Row>(sql, params, budgetMs);
  }

  onApplicationShutdown(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * The one write the API makes, `api_keys.last_used_at` (on MariaDB its read-only account has
 * UPDATE on that column alone): on the embedded engine a writable handle of its own, used for
 * nothing else. It never waits for another writer (`busy_timeout` 0): while `import` or
 * `aggregate` holds the write lock the use is not recorded, as a failed write already is on
 * MariaDB; the next use a minute later records it.
 */
export class EmbeddedKeyUse implements OnApplicationShutdown {
  private db: BetterSqlite3.Database | undefined;

  constructor(private readonly file: string) {}

  static fromConfig(config: AppConfig): EmbeddedKeyUse | null {
    return config.embedded ? new EmbeddedKeyUse(config.embedded.path) : null;
  }

  /** Writes last_used_at unless a newer write already happened. */
  record(keyId: number, now: Date, notBefore: Date): void {
    this.db ??= this.open();
    this.db
      .prepare(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
      )
      .run(now, keyId, notBefore);
  }

  onApplicationShutdown(): void {
    this.db?.close();
  }

  private open(): BetterSqlite3.Database {
    const Database = embeddedSqliteDriver();
    return new Database(this.file, { fileMustExist: true, timeout: 0 });
  }
}
