import { AppConfig } from '@app/config';
import { currentReadPin, EmbeddedReads, ReplicaSet, Sql, SqlDialect, withReadPin } from '@app/db';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CompiledQuery } from 'kysely';
import { DataSource } from 'typeorm';
import { QueryTimeBudgetError } from './query-time-budget-error';
import { reportSessions } from './report-session';

/** A report statement for one engine: built from the dialect (its builder and helpers). */
export type ReportStatement<Row> = (dialect: SqlDialect) => CompiledQuery<Row>;

interface PooledConnection {
  threadId?: number;
}

/**
 * The only way report query modules reach the database: every SELECT runs under the query
 * time budget (SPEC §5), so a runaway report is stopped by the server and answered 503.
 *
 * Reads go to a read replica when API_DATABASE_REPLICA_URLS names some (ReplicaSet picks it,
 * the same one for every read of a request); a replica that cannot be reached mid-request hands
 * the read, and the rest of the request, to the primary.
 *
 * Inside an HTTP request (a ReportSession), each statement first takes the connection permits
 * of the request's key, its site and the process (the pool less two), served in the requests'
 * arrival order, then runs on a pooled connection whose thread id the session knows, so that a
 * client that goes away has its statements killed.
 */
@Injectable()
export class ReportDb {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly sql: Sql,
    private readonly config: AppConfig,
    @Optional() private readonly replicas?: ReplicaSet,
    @Optional() @Inject(EmbeddedReads) private readonly embedded?: EmbeddedReads | null,
  ) {}

  get dialect(): SqlDialect {
    return this.sql.dialect;
  }

  /** Builds `statement` for the connected engine and runs it. */
  run<Row>(statement: ReportStatement<Row>): Promise<Row[]> {
    const compiled = this.dialect.renderIndexHints(statement(this.dialect));
    return this.select<Row>(compiled.sql, [...compiled.parameters]);
  }

  /** Runs one SELECT of plain SQL (operational reads such as the metrics' queue gauge). */
  async select<Row>(statement: string, params: unknown[] = []): Promise<Row[]> {
    const replicas = this.replicas?.configured ? this.replicas : undefined;
    if (replicas && !currentReadPin()) return withReadPin(() => this.select<Row>(statement, params));
    const dialect = this.dialect;
    const sql = dialect.withTimeBudget(statement, this.config.limits.queryTimeoutMs);
    const server = replicas?.readServer() ?? 'primary';
    try {
      try {
        return await this.read<Row>(sql, params, !replicas);
      } catch (error) {
        if (!replicas?.failOver(error, server)) throw error;
        return await this.read<Row>(sql, params, false);
      }
    } catch (error) {
      if (dialect.isTimeBudgetError(error)) throw new QueryTimeBudgetError(error);
      throw error;
    }
  }

  /**
   * A read: TypeORM's "slave" mode, which is the primary unless replicas are configured.
   * `killable`: the session may KILL QUERY its thread when the client goes away; only on the
   * primary, because a thread id means another thread on another server.
   */
  private async read<Row>(sql: string, params: unknown[], killable: boolean): Promise<Row[]> {
    const session = reportSessions.getStore();
    if (this.embedded) {
      const embedded = this.embedded;
      const read = () => embedded.select<Row>(sql, params, this.config.limits.queryTimeoutMs);
      if (!session) return read();
      const release = await session.connectionPermit();
      try {
        return await session.onThread(undefined, read);
      } finally {
        release();
      }
    }
    const runner = this.ds.createQueryRunner('slave');
    if (!session) {
      try {
        return await this.ds.query<Row[]>(sql, params, runner);
      } finally {
        await runner.release();
      }
    }
    const release = await session.connectionPermit();
    try {
      try {
        await runner.connect();
        const threadId = killable
          ? (runner as unknown as { databaseConnection?: PooledConnection }).databaseConnection?.threadId
          : undefined;
        return (await session.onThread(threadId, () => runner.query(sql, params))) as Row[];
      } finally {
        await runner.release();
      }
    } finally {
      release();
    }
  }
}
