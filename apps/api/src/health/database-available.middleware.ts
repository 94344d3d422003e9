import { problem, sendProblem } from '@app/common';
import { DatabaseMonitor } from '@app/db';
import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * While the DatabaseMonitor's last check failed, /api/v1 requests are answered 503 at once:
 * a database that stopped answering would otherwise hold each request until a timeout.
 */
@Injectable()
export class DatabaseAvailableMiddleware implements NestMiddleware {
  constructor(private readonly db: DatabaseMonitor) {}

  use(req: Request, res: Response, next: NextFunction): void {
    if (this.db.isAvailable) return next();
    sendProblem(
      res,
      problem(HttpStatus.SERVICE_UNAVAILABLE, 'The database is unavailable. Retry later.', {
        instance: req.path,
      }),
      { 'Retry-After': '5' },
    );
  }
}
