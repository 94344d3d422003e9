import { AppConfig } from '@app/config';
import { Sql } from '@app/db';
import { Injectable, Logger } from '@nestjs/common';
import { createConnection } from 'mysql2/promise';

/**
 * Stops a running statement (the dialect's `cancelStatement`, `KILL QUERY` on MariaDB/MySQL), on a short-lived connection of its
 * own: the pool may be full, and the statement's own connection is busy running it. The API's
 * user may kill its own threads without any privilege.
 */
@Injectable()
export class QueryKiller {
  private readonly logger = new Logger('ReportConcurrency');

  constructor(
    private readonly config: AppConfig,
    private readonly sql: Sql,
  ) {}

  kill(threadId: number): void {
    void this.run(threadId);
  }

  private async run(threadId: number): Promise<void> {
    const location = this.config.apiDatabase;
    try {
      const conn = await createConnection({
        host: location.host,
        port: location.port,
        user: location.user,
        password: location.password,
        database: location.database,
        connectTimeout: this.config.dbConnectTimeoutMs,
      });
      try {
        await conn.query(this.sql.dialect.cancelStatement, [threadId]);
      } finally {
        await conn.end();
      }
      this.logger.debug(`stopped the query on thread ${threadId}: its client went away`);
    } catch (e) {
      // The statement may have ended meanwhile (unknown thread); it stops at its time budget anyway.
      this.logger.debug(`could not stop the query on thread ${threadId}: ${(e as Error).message}`);
    }
  }
}
