/**
 * The reports in-process: a Nest application context built from the API's own modules
 * (AppModule, so every provider is the production one), configured with a time budget long
 * enough that the raw computation always finishes. It answers a request's parameters through
 * the same validation pipe and StatsQueryParser as a controller, with `tables: 'raw'`.
 */
import 'reflect-metadata';
import { AppConfig, loadConfig } from '@app/config';
import { ApiValidationPipe } from '@app/common';
import { DatabaseMonitor } from '@app/db';
import { StatsQueryParser, type SiteContext } from '@app/stats';
import { ConsoleLogger, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppModule } from '../../apps/api/src/app.module';
import type { Endpoint, Params } from './endpoints';

/** An hour: the raw computation runs without the API's budget, and the bench stays bounded by its run count. */
export const RAW_QUERY_TIMEOUT_MS = 3_600_000;

/**
 * A likely reason the API's read-only account (user@'%') is refused on a server of one's own: an
 * anonymous account's host is more specific, so it takes the logins (BENCHMARKS.md runs X and BU).
 */
const ANONYMOUS_ACCOUNTS =
  "the API's read-only account was refused; if the server has anonymous accounts (''@'localhost', as mariadb-install-db creates), they take its logins: DROP USER ''@'localhost'";

export class RawReports {
  private readonly pipe = new ApiValidationPipe();

  private constructor(private readonly app: INestApplicationContext) {}

  /** `databaseEnv`: the variables pointing the API at the benchmark's database (BenchStore.apiEnv). */
  static async open(databaseEnv: NodeJS.ProcessEnv): Promise<RawReports> {
    const config = loadConfig({
      ...process.env,
      ...databaseEnv,
      REDIS_URL: '',
      QUERY_TIMEOUT_MS: String(RAW_QUERY_TIMEOUT_MS),
      REPORT_CACHE_MB: '0',
      LOG_LEVEL: 'silent',
      DB_POOL_SIZE: '2',
    });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(AppConfig)
      .useValue(config)
      .setLogger(new ConsoleLogger({ logLevels: ['error', 'fatal'] }))
      .compile();
    moduleRef.useLogger(false);
    await moduleRef.init();
    const ds = moduleRef.get<DataSource>(getDataSourceToken());
    const deadline = Date.now() + 20_000;
    while (!ds.isInitialized && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!ds.isInitialized) {
      // The server's reason, which the silenced logger would have printed.
      const { error } = moduleRef.get(DatabaseMonitor).status();
      await moduleRef.close();
      const hint = error?.includes('ACCESS_DENIED') ? ` (${ANONYMOUS_ACCOUNTS})` : '';
      throw new Error(
        `the in-process reports could not connect to the database${error ? `: ${error}${hint}` : ''}`,
      );
    }
    return new RawReports(moduleRef);
  }

  /**
   * The report of `endpoint` for `params` computed on the raw tables, and the milliseconds
   * the service took (parameter validation and parsing excluded).
   */
  async run(endpoint: Endpoint, site: SiteContext, params: Params): Promise<{ body: unknown; ms: number }> {
    if (!endpoint.raw) throw new Error(`${endpoint.name} has no raw computation`);
    const dto = (await this.pipe.transform(
      { ...params },
      { type: 'query', metatype: endpoint.raw.dto, data: undefined },
    )) as never;
    const query = { ...(await this.app.get(StatsQueryParser).parse(site, dto)), tables: 'raw' as const };
    const started = process.hrtime.bigint();
    const body = await endpoint.raw.run(this.app, query, dto);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    // As the API serialises it: a plain JSON value, so that it compares with an HTTP body.
    return { body: JSON.parse(JSON.stringify(body)) as unknown, ms };
  }

  close(): Promise<void> {
    return this.app.close();
  }
}
