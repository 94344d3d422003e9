import * as mysql2 from 'mysql2';

type Callback = (error: (Error & { code?: string }) | null, ...results: unknown[]) => void;

interface PooledConnection {
  query: (...args: unknown[]) => unknown;
  destroy(): void;
  stream?: { destroy(): void };
}

/**
 * What every connection of ours to the MySQL family sets once, when its pool opens it.
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
 * mysql2 for TypeORM's `driver` option: each connection its pool opens runs SESSION_SETTINGS
 * first and, with `dropOnTimeout` (the API), a statement that runs into the client-side
 * timeout (`enableQueryTimeout`) takes its connection with it.
 *
 * mysql2 reports the timeout but keeps the connection, and TypeORM then hands it back to the
 * pool with the abandoned statement still queued on it: the next request that gets it waits
 * behind a statement the server may never answer (a frozen or unreachable database). Enough
 * of those and the pool is full of dead connections, so the API would not recover when the
 * database does. Destroying the connection keeps the pool made of connections that answer.
 */
export function mysqlDriver(options: { dropOnTimeout: boolean }): typeof mysql2 {
  const opened = (connection: PooledConnection) => {
    // Queued ahead of the statement the connection was opened for. A server that refuses the
    // setting (none of the MySQL family does) leaves the connection as it was: plans only.
    connection.query(SESSION_SETTINGS, () => undefined);
    if (options.dropOnTimeout) dropOnTimeout(connection);
  };
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
