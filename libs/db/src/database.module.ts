import { AppConfig, ConfigModule } from '@app/config';
import { DynamicModule, Global, Injectable, Module } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ensureDatabase } from './admin';
import { DatabaseMonitor } from './database-monitor';
import { ReplicaSet } from './replica-set';
import { dataSourceOptions } from './data-source-options';
import { dialectForServerVersion, SqlDialect } from './dialect';
import { ENTITIES } from './entities';

/** The SQL dialect of the connected server; read it only once connected. */
@Injectable()
export class Sql {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  get dialect(): SqlDialect {
    // The driver reads the server version when it connects.
    return dialectForServerVersion((this.ds.driver as { version?: string }).version ?? '');
  }
}

/** Opens the connection on demand (the CLI), creating the database first when asked to. */
@Injectable()
export class DatabaseConnector {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly config: AppConfig,
  ) {}

  async connect(options: { createDatabase?: boolean } = {}): Promise<DataSource> {
    if (this.ds.isInitialized) return this.ds;
    if (options.createDatabase) await ensureDatabase(this.config.database);
    return this.ds.initialize();
  }

  async close(): Promise<void> {
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

@Global()
@Module({})
export class DatabaseModule {
  /**
   * `api`: the API's connection (read-only user when API_DATABASE_URL is set), opened by the
   * DatabaseMonitor at boot and retried until the database answers, so that the API boots
   * and answers 503 while the database is down. Its statements carry a client-side timeout
   * just above the query time budget, so that none can hang on a database that stopped
   * answering.
   * `admin`: the operator's connection, opened by DatabaseConnector when a command needs it,
   * so that `--help` works without a database and `migrate` can create it.
   */
  static forRoot(role: 'api' | 'admin'): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        ConfigModule,
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(
              role === 'api' ? config.apiDatabase : config.database,
              {
                poolSize: config.dbPoolSize,
                connectTimeoutMs: config.dbConnectTimeoutMs,
                api:
                  role === 'api'
                    ? {
                        statementTimeoutMs: config.limits.queryTimeoutMs + 1000,
                        queueLimit: config.dbReliability.queueLimit,
                      }
                    : undefined,
              },
              role === 'api' ? config.replicas.locations : [],
            ),
            manualInitialization: true,
            retryAttempts: 0,
          }),
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [Sql, DatabaseConnector, ...(role === 'api' ? [DatabaseMonitor, ReplicaSet] : [])],
      exports: [
        TypeOrmModule,
        Sql,
        DatabaseConnector,
        ...(role === 'api' ? [DatabaseMonitor, ReplicaSet] : []),
      ],
    };
  }
}
