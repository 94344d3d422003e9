import { problem, sendProblem } from '@app/common';
import { ReplicaSet, withReadPin } from '@app/db';
import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * While no database can answer (the DatabaseMonitor's last check of the primary failed and no
 * read replica may be read), /api/v1 requests are answered 503 at once: a database that
 * stopped answering would otherwise hold each request until a timeout. Otherwise the rest of
 * the request runs with its reads pinned to one server (read-pin.ts).
 */
@Injectable()
export class DatabaseAvailableMiddleware implements NestMiddleware {
  constructor(private readonly db: ReplicaSet) {}

  use(req: Request, res: Response, next: NextFunction): void {
    if (this.db.canServe) return withReadPin(next);
    sendProblem(
      res,
      problem(HttpStatus.SERVICE_UNAVAILABLE, 'The database is unavailable. Retry later.', {
        instance: req.path,
      }),
      { 'Retry-After': '5' },
    );
  }
}
