import type { DataSource, QueryRunner } from 'typeorm';
import { QueryFailedError } from 'typeorm';

/** What a prepared read needs of a connection of mysql2's (callback) pool. */
interface PoolConnection {
  execute(sql: string, values: unknown[], callback: (error: Error | null, rows: unknown) => void): void;
  destroy(): void;
  stream?: { destroy(): void };
}

/** TypeORM's MysqlDriver: `pool` without replicas, `poolCluster` with them (not in its typings as such). */
interface MysqlDriverInternals {
  pool?: unknown;
  poolCluster?: unknown;
}

/**
 * Runs a read as a server-side prepared statement (mysql2's `execute`) on the connection the
 * query runner takes from TypeORM's own pool. For where every read goes to that one pool
 * (readsPrepared): with read replicas, reads keep to `runner.query` in TypeORM's read mode,
 * where ReplicaSet routes them (docs/decisions/replicas.md).
 *
 * For a statement run on every request (the key lookup of ApiKeyGuard), `runner.query` cost
 * more Node CPU than the statement itself: mysql2's promise wrapper (which captures a stack
 * trace per statement), TypeORM's broadcaster, and formatting and escaping the whole text into
 * the query on the client. A prepared statement is parsed once per connection and then sends
 * only its parameters.
 *
 * It keeps what `runner.query` has: the client-side timeout (here over the prepare as well as
 * the execution), after which the connection is destroyed rather than returned to the pool with
 * the statement still queued on it (as mysqlDriver does for the API; the runner's release is then a
 * no-op), the slow-statement log, and errors wrapped as TypeORM wraps them (QueryFailedError
 * with `driverError`), so they are classified as before.
 */
export async function preparedRead<Row>(
  runner: QueryRunner,
  statement: string,
  params: unknown[],
): Promise<Row[]> {
  const ds = runner.connection;
  const connection = (await runner.connect()) as PoolConnection;
  const { enableQueryTimeout, maxQueryExecutionTime } = ds.options as {
    enableQueryTimeout?: boolean;
    maxQueryExecutionTime?: number;
  };
  const timeoutMs = enableQueryTimeout && maxQueryExecutionTime ? maxQueryExecutionTime : undefined;
  return new Promise<Row[]>((resolve, reject) => {
    const started = Date.now();
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (error: Error | null, rows?: unknown) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      const ms = Date.now() - started;
      if (maxQueryExecutionTime && ms > maxQueryExecutionTime) ds.logger.logQuerySlow(ms, statement, params);
      if (error) reject(new QueryFailedError(statement, params, error));
      else resolve(rows as Row[]);
    };
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        connection.destroy();
        // destroy() only half-closes the socket; a server that stopped answering never finishes it.
        connection.stream?.destroy();
        settle(statementTimeout());
      }, timeoutMs);
    }
    try {
      connection.execute(statement, params, settle);
    } catch (thrown) {
      settle(thrown as Error);
    }
  });
}

/** Whether every read of this DataSource goes to one mysql2 pool: where preparedRead is for. */
export function readsPrepared(ds: DataSource): boolean {
  if (!ds.isInitialized || (ds.options.type !== 'mysql' && ds.options.type !== 'mariadb')) return false;
  const driver = ds.driver as unknown as MysqlDriverInternals;
  return driver.pool !== undefined && driver.poolCluster === undefined;
}

/** The error mysql2 gives a statement that ran into its client-side timeout. */
function statementTimeout(): Error {
  return Object.assign(new Error('Query inactivity timeout'), {
    code: 'PROTOCOL_SEQUENCE_TIMEOUT',
    fatal: true,
  });
}
