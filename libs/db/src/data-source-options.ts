import type { AppConfig, DatabaseLocation } from '@app/config';
import type { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { mysqlDriver } from './mysql-driver';
import { MIGRATIONS } from './migrations';
import { SQLITE_MIGRATIONS } from './migrations-sqlite';
import { embeddedSqliteDriver } from './sqlite/embedded-driver';
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
        maxQueryExecutionTime: pool.api.statementTimeoutMs,
        enableQueryTimeout: true,
        logger: new ApiTypeOrmLogger(),
      }
    : {};
  return {
    type: 'mysql',
    driver: mysqlDriver(
      pool.api ? { statementTimeoutMs: pool.api.statementTimeoutMs } : { sessionSettings: true },
    ),
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
    // trace: false spares every statement mysql2's capture of its caller's stack (an Error's
    // stack trace, ~60 µs: 0.9 s of an import's 1.3M hits at 1M); a failed statement's error
    // then carries the driver's stack instead.
    extra: { enableKeepAlive: true, trace: false, ...(pool.api ? { queueLimit: pool.api.queueLimit } : {}) },
  };
}

/**
 * The embedded engine's file (issue #15). The API opens it read-only (its "read-only
 * account"); the CLI opens it for writing, in WAL mode so that the API keeps reading while
 * `import` or `aggregate` writes. A writer waits up to 10 s for another one (`timeout`).
 */
export function embeddedDataSourceOptions(
  file: string,
  options: { readonly?: boolean } = {},
): DataSourceOptions {
  const readonly = options.readonly ?? false;
  return {
    type: 'better-sqlite3',
    database: file,
    driver: embeddedSqliteDriver(),
    readonly,
    fileMustExist: readonly,
    enableWAL: !readonly,
    timeout: 10_000,
    entities: ENTITIES,
    migrations: SQLITE_MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
  };
}

/** The DataSource options of `role` for the configured engine. */
export function configuredDataSourceOptions(
  config: AppConfig,
  role: 'api' | 'admin',
  pool: PoolOptions = {},
): DataSourceOptions {
  if (config.embedded) return embeddedDataSourceOptions(config.embedded.path, { readonly: role === 'api' });
  return dataSourceOptions(
    role === 'api' ? config.apiDatabase : config.database,
    pool,
    role === 'api' ? config.replicas.locations : [],
  );
}
