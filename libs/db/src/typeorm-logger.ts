import { Logger as NestLogger } from '@nestjs/common';
import type { Logger } from 'typeorm';

/**
 * TypeORM's logger for the API: slow statements go to the application log as one structured
 * warning, without their parameters; everything else is left to the code that handles the
 * error. TypeORM's default logger would print every slow statement with its parameters to
 * stdout, outside the JSON log.
 */
export class ApiTypeOrmLogger implements Logger {
  private readonly logger = new NestLogger('Database');

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow statement (${time} ms): ${query.replace(/\s+/g, ' ').slice(0, 300)}`);
  }

  logQuery(): void {}
  logQueryError(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
  }
}
