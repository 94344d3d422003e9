import { AppConfig } from '@app/config';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PrivilegedDatabaseUserError, writePrivileges } from './least-privilege';
import { describeDatabaseError } from './driver-errors';
import { ServerProbe } from './server-probe';
import { embeddedEngineLine } from './sqlite/embedded-driver';

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
  /** Unset with the embedded engine: no server to probe, and its connection is read-only. */
  private readonly probe: ServerProbe | undefined;
  private running: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private leastPrivilegeChecked = false;
  private refusal: PrivilegedDatabaseUserError | undefined;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
  ) {
    this.probe = config.embedded ? undefined : new ServerProbe(config.apiDatabase, config.dbConnectTimeoutMs);
  }

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

  /** Fails the boot (one clear error) when the database answers as a user that can write. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.embedded)
      this.logger.log(`${embeddedEngineLine(this.config.embedded.path)} (read-only for the API)`);
    await this.check();
    if (this.refusal) throw this.refusal;
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.probe?.close();
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
      if (!this.leastPrivilegeChecked && !this.config.embedded) await this.checkLeastPrivilege();
      await this.ping();
      this.markAvailable();
    } catch (error) {
      this.markUnavailable(error);
    }
    return this.available;
  }

  /**
   * The API reads; its user should not be able to write (ALLOW_PRIVILEGED_DB_USER=true says it
   * may). Checked on the first connection: at boot the process refuses to start; after a boot
   * without a database, the API stays unavailable (503) and checks again every interval, so
   * revoking the privileges is enough to bring it up.
   */
  private async checkLeastPrivilege(): Promise<void> {
    const { user, privileges } = await writePrivileges(this.ds, this.config.apiDatabase.database);
    if (privileges.length > 0 && !this.config.dbReliability.allowPrivilegedUser) {
      this.refusal = new PrivilegedDatabaseUserError(user, privileges);
      throw this.refusal;
    }
    if (privileges.length > 0)
      this.logger.warn(
        `the API's database user ${user} can write (${privileges.slice(0, 6).join(', ')}); allowed by ALLOW_PRIVILEGED_DB_USER=true`,
      );
    this.refusal = undefined;
    this.leastPrivilegeChecked = true;
  }

  private async ping(): Promise<void> {
    if (this.probe) await this.probe.query('SELECT 1');
    else await this.ds.query('SELECT 1');
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
    const reason = describeDatabaseError(error);
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
