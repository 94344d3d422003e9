import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { problem } from './problem';
import { sendProblem } from './send-problem';

const ALLOWED = new Set(['GET', 'HEAD']);

/** The API is read-only: any other method on an API path is a 405, before authentication. */
@Injectable()
export class MethodNotAllowedMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    if (ALLOWED.has(req.method)) return next();
    sendProblem(
      res,
      problem(HttpStatus.METHOD_NOT_ALLOWED, `${req.method} is not allowed: this API is read-only.`, {
        instance: req.path,
      }),
      { Allow: 'GET, HEAD' },
    );
  }
}
