import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Server } from 'node:http';
import { problem } from './problem';
import { sendProblem } from './send-problem';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. Node answers it itself with an
 * empty body (its `requireHostHeader`), before any application code; this middleware gives the
 * same 400 as a problem body naming the header, after the rate limiter on /api/v1, so that it
 * also carries RateLimit-* there. HTTP/1.0 requests may omit Host.
 */
@Injectable()
export class HostRequiredMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    if (!(req.httpVersionMajor === 1 && req.httpVersionMinor === 1) || req.headers.host !== undefined)
      return next();
    const message = 'an HTTP/1.1 request must carry a Host header';
    const body = problem(HttpStatus.BAD_REQUEST, `Bad request: ${message}.`, {
      instance: req.path,
      errors: [{ parameter: 'Host', message }],
    });
    sendProblem(res, body, { Connection: 'close' });
  }
}

/** Lets requests without Host reach the application, where HostRequiredMiddleware answers them. */
export function leaveHostCheckToTheApp(server: Server): void {
  (server as Server & { requireHostHeader?: boolean }).requireHostHeader = false;
}
