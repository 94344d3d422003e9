import { AppConfig } from '@app/config';
import { Sql, SqlDialect } from '@app/db';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * The only way report query modules reach the database: every SELECT runs under the query
 * time budget (SPEC §5), so a runaway report is stopped by the server and answered 503.
 */
@Injectable()
export class ReportDb {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly sql: Sql,
    private readonly config: AppConfig,
  ) {}

  get dialect(): SqlDialect {
    return this.sql.dialect;
  }

  select<T>(statement: string, params: unknown[] = []): Promise<T[]> {
    return this.ds.query(this.dialect.withTimeBudget(statement, this.config.limits.queryTimeoutMs), params);
  }
}
