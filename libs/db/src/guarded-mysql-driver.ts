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
  return { ...mysql2, createPool } as typeof mysql2;
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
