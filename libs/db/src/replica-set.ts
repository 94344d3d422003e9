import { AppConfig } from '@app/config';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseMonitor } from './database-monitor';
import { dialectForServerVersion, SqlDialect } from './dialect';
import { describeDatabaseError, isDatabaseUnavailableError } from './driver-errors';
import { currentReadPin } from './read-pin';
import { ReplicationLag } from './replication-lag';
import { ServerProbe, serverName } from './server-probe';

export type ReplicaState = 'up' | 'lagging' | 'down';

export interface ReplicaStatus {
  /** host:port */
  replica: string;
  state: ReplicaState;
  /** Seconds behind the primary; null while unknown (down, or not yet at the first position seen). */
  lagSeconds: number | null;
  /** When `state` last changed (or the API started), ISO 8601. */
  since: string;
  error?: string;
}

interface Replica {
  name: string;
  probe: ServerProbe;
  state: ReplicaState;
  lagSeconds: number | null;
  since: number;
  error?: string;
}

/** What TypeORM's MysqlDriver has with `replication` set (public methods, not in its typings as such). */
interface ReplicatedDriver {
  poolCluster?: {
    getConnection(pattern: string, callback: (error: Error | null, connection: unknown) => void): void;
  };
  obtainMasterConnection(): Promise<unknown>;
  obtainSlaveConnection(): Promise<unknown>;
  prepareDbConnection(connection: unknown): unknown;
}

/**
 * The API's read replicas (API_DATABASE_REPLICA_URLS): which of them may be read now, and the
 * routing of TypeORM's "slave" reads to them.
 *
 * TypeORM's replication support (`replication: { master, slaves }`) gives one pool per server
 * and sends reads made in "slave" mode (ReportDb, repository finds) to `obtainSlaveConnection`,
 * and everything else (`ds.query`, writes such as a key's last_used_at) to the primary. Its
 * own choice of slave is round robin over every slave, lagging or not; this replaces it with
 * one that reads only replicas that answer and are at most REPLICA_MAX_LAG_SECONDS behind,
 * the primary when none is, and the same server for every read of one request (read-pin.ts).
 * Each replica is checked every DB_HEALTH_INTERVAL_MS on a connection of its own; a read
 * that fails to reach one marks it down at once.
 */
@Injectable()
export class ReplicaSet implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Replicas');
  private readonly replicas: Replica[];
  private readonly primaryProbe: ServerProbe;
  private readonly lag: ReplicationLag;
  private readonly reads = new Map<string, number>();
  private dialect: SqlDialect | undefined;
  private next = 0;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @InjectDataSource() ds: DataSource,
    private readonly config: AppConfig,
    private readonly primary: DatabaseMonitor,
  ) {
    const timeout = config.dbConnectTimeoutMs;
    this.primaryProbe = new ServerProbe(config.apiDatabase, timeout);
    this.replicas = config.replicas.locations.map((location) => ({
      name: serverName(location),
      probe: new ServerProbe(location, timeout),
      state: 'down',
      lagSeconds: null,
      since: Date.now(),
      error: 'not checked yet',
    }));
    this.lag = new ReplicationLag(Math.max(60_000, config.replicas.maxLagSeconds * 2000));
    if (this.configured) this.routeReads(ds.driver as unknown as ReplicatedDriver);
  }

  get configured(): boolean {
    return this.replicas.length > 0;
  }

  /** Some database can answer reads: the primary, or a replica that may be read. */
  get canServe(): boolean {
    return this.primary.isAvailable || this.replicas.some((r) => r.state === 'up');
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      replica: r.name,
      state: r.state,
      lagSeconds: r.lagSeconds,
      since: new Date(r.since).toISOString(),
      ...(r.error ? { error: r.error } : {}),
    }));
  }

  /** Reads handed out so far, by server ('primary' or host:port). */
  readCounts(): ReadonlyMap<string, number> {
    return this.reads;
  }

  /**
   * The server the current read goes to: the request's pinned server, else a replica that
   * may be read (round robin), else the primary. Pins it for the rest of the request.
   */
  readServer(): number | 'primary' {
    const pin = currentReadPin();
    if (pin?.server !== undefined) return pin.server;
    const up = this.replicas.flatMap((r, i) => (r.state === 'up' ? [i] : []));
    const server = up.length ? up[this.next++ % up.length] : 'primary';
    if (pin) pin.server = server;
    return server;
  }

  /**
   * After a read on `server` failed: when it was a replica that could not be reached, marks
   * it down, moves the request to the primary and says to retry there.
   */
  failOver(error: unknown, server: number | 'primary'): boolean {
    if (server === 'primary' || !isDatabaseUnavailableError(error)) return false;
    this.markDown(server, error);
    const pin = currentReadPin();
    if (pin) {
      pin.server = 'primary';
      pin.failedOver = true;
    }
    return true;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.configured) return;
    await this.check();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.primaryProbe.close();
    for (const r of this.replicas) r.probe.close();
  }

  /** One check of every replica now (position and lag); concurrent callers share it. */
  check(): Promise<void> {
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

  private async runCheck(): Promise<void> {
    try {
      const dialect = await this.serverDialect();
      const [row] = await this.primaryProbe.query<{ pos: string | null }>(
        dialect.replicationPosition('primary'),
      );
      this.lag.recordPrimary(dialect.parseReplicationPosition(row?.pos ?? null), Date.now());
    } catch {
      // The primary is down: replicas are judged against the last position seen.
    }
    await Promise.all(this.replicas.map((r, i) => this.checkReplica(r, i)));
  }

  private async checkReplica(replica: Replica, index: number): Promise<void> {
    try {
      const dialect = await this.serverDialect(replica.probe);
      const [row] = await replica.probe.query<{ pos: string | null }>(dialect.replicationPosition('replica'));
      const lag = this.lag.lagSeconds(dialect.parseReplicationPosition(row?.pos ?? null), Date.now());
      // Judged on the figure reported, so that /health/ready and /metrics tell the same story.
      replica.lagSeconds = lag === null ? null : Math.round(lag * 10) / 10;
      const readable =
        replica.lagSeconds !== null && replica.lagSeconds <= this.config.replicas.maxLagSeconds;
      this.setState(
        index,
        readable ? 'up' : 'lagging',
        readable
          ? undefined
          : lag === null
            ? 'behind the first primary position seen'
            : `${replica.lagSeconds} s behind`,
      );
    } catch (error) {
      this.markDown(index, error);
    }
  }

  /** The engine, read once from whichever server answers first (they are one family). */
  private async serverDialect(probe: ServerProbe = this.primaryProbe): Promise<SqlDialect> {
    if (!this.dialect) {
      const [row] = await probe.query<{ v: string }>('SELECT VERSION() AS v');
      this.dialect = dialectForServerVersion(row.v);
    }
    return this.dialect;
  }

  private markDown(index: number, error: unknown): void {
    this.replicas[index].lagSeconds = null;
    this.setState(index, 'down', describeDatabaseError(error));
  }

  private setState(index: number, state: ReplicaState, reason?: string): void {
    const replica = this.replicas[index];
    const changed = replica.state !== state;
    replica.error = reason;
    if (!changed) return;
    const was = replica.state;
    replica.state = state;
    replica.since = Date.now();
    if (state === 'up') this.logger.log(`replica ${replica.name} readable${was === 'down' ? '' : ' again'}`);
    else
      this.logger.warn(
        `replica ${replica.name} ${state} (${reason}); reading ${this.replicas.some((r) => r.state === 'up') ? 'the other replicas' : 'the primary'}`,
      );
  }

  private routeReads(driver: ReplicatedDriver): void {
    const primary = () => driver.obtainMasterConnection();
    driver.obtainSlaveConnection = async () => {
      const server = this.readServer();
      if (server === 'primary') {
        this.count('primary');
        return primary();
      }
      try {
        const connection = await this.replicaConnection(driver, server);
        this.count(this.replicas[server].name);
        return connection;
      } catch (error) {
        if (!this.failOver(error, server)) throw error;
        this.count('primary');
        return primary();
      }
    };
  }

  private replicaConnection(driver: ReplicatedDriver, index: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (!driver.poolCluster) return reject(new Error('Connection is not established'));
      // TypeORM names the slaves' pools SLAVE0, SLAVE1, … in the order of `replication.slaves`.
      driver.poolCluster.getConnection(`SLAVE${index}`, (error, connection) =>
        error ? reject(error) : resolve(driver.prepareDbConnection(connection)),
      );
    });
  }

  private count(server: string): void {
    this.reads.set(server, (this.reads.get(server) ?? 0) + 1);
  }
}
