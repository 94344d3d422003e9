import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** An incoming id is kept when it is short and plain enough to log and echo safely. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}$/;

/** An id that looks like an API key is refused too: it would be logged and echoed. */
const KEY_LIKE = /sk_[A-Za-z0-9_-]{16,}/i;

export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) && !KEY_LIKE.test(header)
    ? header
    : randomUUID();
}

/**
 * Gives every request an id before anything else runs (the incoming X-Request-Id when sane,
 * else a UUID), echoes it in the response, and leaves it on `req.id` where pino-http finds it.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdOf(req.headers['x-request-id']);
  (req as Request & { id?: string }).id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}
