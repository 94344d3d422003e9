import * as mysql2 from 'mysql2';

type Callback = (error: (Error & { code?: string }) | null, ...results: unknown[]) => void;

export interface PooledConnection {
  query: (...args: unknown[]) => unknown;
  destroy(): void;
  stream?: { destroy(): void };
}

/**
 * What the CLI's connections to the MySQL family (`import`, `aggregate`, `migrate`) set once,
 * when their pool opens them.
 *
 * `eq_range_index_dive_limit = 0`: the server estimates an IN list's rows by looking each value
 * up in the index, however long the list. From 200 values on (the default) it multiplies the
 * list's length by an average rows-per-key from sampled statistics instead, and for one busy
 * site among many small ones that average can be far off: a list of 900 sessions then looked
 * dearer than every row of the site, and MariaDB read the site's whole range of the hits
 * (`ref` on site_id) for `aggregate`'s statements (BENCHMARKS.md run AP). `aggregate` and
 * `import` put up to MAX_IN_LIST (900) keys in a list; looking them up costs the planner ~2 ms
 * (docs/decisions/rollups.md weighs that). MySQL reads the variable the same way (0: always
 * look up).
 */
export const SESSION_SETTINGS = 'SET SESSION eq_range_index_dive_limit = 0';

/**
 * mysql2 for TypeORM's `driver` option: each connection its pool opens is prepared by
 * `openedConnection` before the statement it was opened for.
 */
export function mysqlDriver(options: ConnectionOptions = {}): typeof mysql2 {
  const opened = (connection: PooledConnection) => openedConnection(connection, options);
  const createPool = (poolOptions: mysql2.PoolOptions): mysql2.Pool => {
    const pool = mysql2.createPool(poolOptions);
    pool.on('connection', (connection) => opened(connection as unknown as PooledConnection));
    return pool;
  };
  // With read replicas TypeORM builds a pool cluster; its pools are created inside mysql2.
  const createPoolCluster = (clusterOptions?: mysql2.PoolClusterOptions): mysql2.PoolCluster => {
    const cluster = mysql2.createPoolCluster(clusterOptions);
    const add = cluster.add.bind(cluster) as (id: string, config: mysql2.PoolOptions) => void;
    (cluster as unknown as { add: typeof add }).add = (id, config) => {
      add(id, config);
      const node = (cluster as unknown as ClusterInternals)._nodes[id];
      node?.pool.on('connection', (connection) => opened(connection as unknown as PooledConnection));
    };
    return cluster;
  };
  return { ...mysql2, createPool, createPoolCluster } as typeof mysql2;
}

export interface ConnectionOptions {
  /**
   * The client-side timeout of every statement (the API's `enableQueryTimeout`): a statement
   * that runs into it takes its connection with it.
   */
  statementTimeoutMs?: number;
  /** Run SESSION_SETTINGS first (the CLI). */
  sessionSettings?: boolean;
}

/**
 * Prepares a connection the pool has just opened.
 *
 * With `statementTimeoutMs` (the API) a statement that runs into the client-side timeout takes
 * its connection with it. mysql2 reports the timeout but keeps the connection, and TypeORM then
 * hands it back to the pool with the abandoned statement still queued on it: the next request
 * that gets it waits behind a statement the server may never answer (a frozen or unreachable
 * database). Enough of those and the pool is full of dead connections, so the API would not
 * recover when the database does. Destroying the connection keeps the pool made of connections
 * that answer.
 *
 * With `sessionSettings` (the CLI) SESSION_SETTINGS is queued ahead of that first statement.
 * Not on the API's connections: mysql2 starts a statement's timer only once the statement
 * before it on the connection has finished, so on a server that stopped answering right after
 * the connection opened, a report's statement queued behind the setting would wait with no
 * timer at all (the CLI's statements have none anyway). The reports' IN lists are short: a
 * breakdown's top values, a filter's values. A server that refuses the setting leaves the
 * connection as it was (plans only).
 */
export function openedConnection(connection: PooledConnection, options: ConnectionOptions): void {
  if (options.statementTimeoutMs !== undefined) dropOnTimeout(connection);
  if (options.sessionSettings) connection.query(SESSION_SETTINGS, () => undefined);
}

/** mysql2's PoolCluster keeps each server's pool here (not in its typings). */
interface ClusterInternals {
  _nodes: Record<string, { pool: mysql2.Pool } | undefined>;
}

function dropOnTimeout(connection: PooledConnection): void {
  const query = connection.query;
  connection.query = function (this: unknown, ...args: unknown[]) {
    const at = args.findIndex((a) => typeof a === 'function');
    if (at >= 0) {
      const callback = args[at] as Callback;
      args[at] = (error: Parameters<Callback>[0], ...results: unknown[]) => {
        if (error?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
          connection.destroy();
          // destroy() only half-closes the socket; a server that stopped answering never finishes it.
          connection.stream?.destroy();
        }
        callback(error, ...results);
      };
    }
    return query.apply(this, args);
  };
}
