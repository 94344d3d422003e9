import { AppConfig, ConfigModule } from '@app/config';
import { DynamicModule, Global, Injectable, Module } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ensureDatabase } from './admin';
import { DatabaseMonitor } from './database-monitor';
import { ReplicaSet } from './replica-set';
import { configuredDataSourceOptions } from './data-source-options';
import { SqlDialect } from './dialect';
import { dialectOf } from './sqlite/dialect-of';
import { EmbeddedKeyUse, EmbeddedReads } from './sqlite/embedded-reads';
import { ENTITIES } from './entities';

/** The SQL dialect of the connected server; read it only once connected. */
@Injectable()
export class Sql {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  get dialect(): SqlDialect {
    return dialectOf(this.ds);
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
    if (options.createDatabase && !this.config.embedded) await ensureDatabase(this.config.database);
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
            ...configuredDataSourceOptions(config, role, {
              poolSize: config.dbPoolSize,
              connectTimeoutMs: config.dbConnectTimeoutMs,
              api:
                role === 'api'
                  ? {
                      statementTimeoutMs: config.limits.queryTimeoutMs + 1000,
                      queueLimit: config.dbReliability.queueLimit,
                    }
                  : undefined,
            }),
            manualInitialization: true,
            retryAttempts: 0,
          }),
        }),
        TypeOrmModule.forFeature(ENTITIES),
      ],
      providers: [
        Sql,
        DatabaseConnector,
        ...(role === 'api'
          ? [
              DatabaseMonitor,
              ReplicaSet,
              {
                provide: EmbeddedReads,
                inject: [AppConfig],
                useFactory: (c: AppConfig) => EmbeddedReads.fromConfig(c),
              },
              {
                provide: EmbeddedKeyUse,
                inject: [AppConfig],
                useFactory: (c: AppConfig) => EmbeddedKeyUse.fromConfig(c),
              },
            ]
          : []),
      ],
      exports: [
        TypeOrmModule,
        Sql,
        DatabaseConnector,
        ...(role === 'api' ? [DatabaseMonitor, ReplicaSet, EmbeddedReads, EmbeddedKeyUse] : []),
      ],
    };
  }
}
