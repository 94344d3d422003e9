import { AppConfig } from '@app/config';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Connection, createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';

export interface DatabaseStatus {
  available: boolean;
  /** When `available` last changed (or the monitor started), ISO 8601. */
  since: string;
  /** Why the last check failed, without credentials: a driver code or message. */
  error?: string;
}

/**
 * Knows whether the API's database answers, and keeps the API connected to it.
 *
 * The API boots without a database: the first connection attempt may fail, and this retries
 * every DB_HEALTH_INTERVAL_MS until it succeeds, with no restart. Once connected, it pings
 * the server on a connection of its own (not one of the pool's, which may all be busy under
 * load) with a short timeout; while the ping fails, requests are answered 503 at once instead
 * of waiting on a database that does not answer, and they flow again after the next good ping.
 */
@Injectable()
export class DatabaseMonitor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private available = false;
  private changedAt = Date.now();
  private lastError: string | undefined;
  private probe: Connection | undefined;
  private running: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
  ) {}

  get isAvailable(): boolean {
    return this.available;
  }

  status(): DatabaseStatus {
    return {
      available: this.available,
      since: new Date(this.changedAt).toISOString(),
      ...(this.lastError ? { error: this.lastError } : {}),
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.check();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.dropProbe();
  }

  /** One check now: connect if never connected, then ping. Concurrent callers share it. */
  check(): Promise<boolean> {
    this.running ??= this.runCheck().finally(() => (this.running = undefined));
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.config.dbReliability.healthIntervalMs);
    this.timer.unref();
  }

  private async runCheck(): Promise<boolean> {
    try {
      if (!this.ds.isInitialized) await this.ds.initialize();
      if (this.stopped) return this.available;
      await this.ping();
      this.markAvailable();
    } catch (error) {
      this.markUnavailable(error);
    }
    return this.available;
  }

  private async ping(): Promise<void> {
    const timeout = this.config.dbConnectTimeoutMs;
    if (!this.probe) {
      const location = this.config.apiDatabase;
      const probe = await createConnection({
        host: location.host,
        port: location.port,
        user: location.user,
        password: location.password,
        database: location.database,
        connectTimeout: timeout,
      });
      // The server may close an idle connection; without a listener that error would crash the process.
      probe.on('error', () => {
        if (this.probe === probe) this.dropProbe();
      });
      this.probe = probe;
    }
    try {
      await this.probe.query({ sql: 'SELECT 1', timeout });
    } catch (error) {
      this.dropProbe();
      throw error;
    }
  }

  private dropProbe(): void {
    const probe = this.probe;
    this.probe = undefined;
    if (!probe) return;
    const raw = (probe as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
    probe.destroy();
    raw?.stream?.destroy();
  }

  private markAvailable(): void {
    if (this.available) return;
    const outage = this.lastError === undefined ? undefined : Date.now() - this.changedAt;
    this.available = true;
    this.lastError = undefined;
    this.changedAt = Date.now();
    this.logger.log(
      outage === undefined
        ? 'database connected'
        : `database available again after ${(outage / 1000).toFixed(1)} s`,
    );
  }

  private markUnavailable(error: unknown): void {
    const reason = describe(error);
    const changed = this.available || this.lastError === undefined;
    if (this.available) this.changedAt = Date.now();
    this.available = false;
    this.lastError = reason;
    if (changed)
      this.logger.warn(
        `database unavailable (${reason}); answering 503 and retrying every ${this.config.dbReliability.healthIntervalMs} ms`,
      );
  }
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; driverError?: { code?: string } };
  return e?.code ?? e?.driverError?.code ?? e?.message?.slice(0, 200) ?? String(error);
}
