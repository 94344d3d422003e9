import type { DatabaseLocation } from '@app/config';
import type { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface PoolOptions {
  poolSize?: number;
  connectTimeoutMs?: number;
}

export function dataSourceOptions(location: DatabaseLocation, pool: PoolOptions = {}): DataSourceOptions {
  return {
    type: 'mysql',
    host: location.host,
    port: location.port,
    username: location.user,
    password: location.password,
    database: location.database,
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
    extra: { enableKeepAlive: true },
  };
}
