import type { DatabaseLocation } from '@app/config';
import type { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { guardedMysqlDriver } from './guarded-mysql-driver';
import { MIGRATIONS } from './migrations';
import { ApiTypeOrmLogger } from './typeorm-logger';

export interface PoolOptions {
  poolSize?: number;
  connectTimeoutMs?: number;
  /**
   * The API's settings: a client-side limit per statement (a statement over it fails and
   * loses its connection), and how many requests may queue for a connection before one fails
   * at once. Not for the CLI, whose imports and aggregations run as long as they need.
   */
  api?: { statementTimeoutMs: number; queueLimit: number };
}

const credentials = (location: DatabaseLocation) => ({
  host: location.host,
  port: location.port,
  username: location.user,
  password: location.password,
  database: location.database,
});

/**
 * `replicas`: read replicas of `location`. TypeORM then opens one pool per server (a mysql2
 * pool cluster): `ds.query` and writes use the primary, reads made in "slave" mode the
 * replicas, as ReplicaSet routes them. A server that fails is never dropped from the cluster
 * (mysql2's default drops it for good after 5 failed connects), and mysql2 does not retry on
 * its own: ReplicaSet decides where a read goes.
 */
export function dataSourceOptions(
  location: DatabaseLocation,
  pool: PoolOptions = {},
  replicas: DatabaseLocation[] = [],
): DataSourceOptions {
  const api = pool.api
    ? {
        driver: guardedMysqlDriver(),
        maxQueryExecutionTime: pool.api.statementTimeoutMs,
        enableQueryTimeout: true,
        logger: new ApiTypeOrmLogger(),
      }
    : {};
  return {
    type: 'mysql',
    ...credentials(location),
    ...(replicas.length
      ? {
          replication: {
            master: credentials(location),
            slaves: replicas.map(credentials),
            canRetry: false,
            removeNodeErrorCount: Number.POSITIVE_INFINITY,
            defaultMode: 'slave' as const,
          },
        }
      : {}),
    charset: 'utf8mb4_bin',
    // Every DATETIME column holds UTC; the driver must neither shift nor guess.
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    poolSize: pool.poolSize ?? 10,
    connectTimeout: pool.connectTimeoutMs ?? 1000,
    ...api,
    extra: { enableKeepAlive: true, ...(pool.api ? { queueLimit: pool.api.queueLimit } : {}) },
  };
}
