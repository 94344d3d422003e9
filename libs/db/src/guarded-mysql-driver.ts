import * as mysql2 from 'mysql2';

type Callback = (error: (Error & { code?: string }) | null, ...results: unknown[]) => void;

interface PooledConnection {
  query: (...args: unknown[]) => unknown;
  destroy(): void;
  stream?: { destroy(): void };
}

/**
 * mysql2 for TypeORM's `driver` option, with one change to its pool: a statement that runs
 * into the client-side timeout (`enableQueryTimeout`) takes its connection with it.
 *
 * mysql2 reports the timeout but keeps the connection, and TypeORM then hands it back to the
 * pool with the abandoned statement still queued on it: the next request that gets it waits
 * behind a statement the server may never answer (a frozen or unreachable database). Enough
 * of those and the pool is full of dead connections, so the API would not recover when the
 * database does. Destroying the connection keeps the pool made of connections that answer.
 */
export function guardedMysqlDriver(): typeof mysql2 {
  const createPool = (options: mysql2.PoolOptions): mysql2.Pool => {
    const pool = mysql2.createPool(options);
    pool.on('connection', (connection) => dropOnTimeout(connection as unknown as PooledConnection));
    return pool;
  };
  // With read replicas TypeORM builds a pool cluster; its pools are created inside mysql2.
  const createPoolCluster = (options?: mysql2.PoolClusterOptions): mysql2.PoolCluster => {
    const cluster = mysql2.createPoolCluster(options);
    const add = cluster.add.bind(cluster) as (id: string, config: mysql2.PoolOptions) => void;
    (cluster as unknown as { add: typeof add }).add = (id, config) => {
      add(id, config);
      const node = (cluster as unknown as ClusterInternals)._nodes[id];
      node?.pool.on('connection', (connection) => dropOnTimeout(connection as unknown as PooledConnection));
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
