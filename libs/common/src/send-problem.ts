import type { NextFunction, Request, Response } from 'express';
import { PROBLEM_CONTENT_TYPE, ProblemBody } from './problem';

/**
 * Cache-Control of the API's answers: a report is private to its key and may change at any
 * time, so a cache must revalidate (`If-None-Match` → 304); an error is never stored.
 */
export const CACHE_CONTROL_REPORT = 'private, max-age=0, must-revalidate';
export const CACHE_CONTROL_PROBLEM = 'no-store';

/** Marks every /api/v1 answer private and revalidated; sendProblem turns it into no-store. */
export function reportCacheControl(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', CACHE_CONTROL_REPORT);
  next();
}

/**
 * Writes an RFC 9457 problem response: the one way every error leaves the API (middlewares
 * and the ProblemFilter). Written with `end`, not Express's `send`, so that an error carries
 * no ETag: only a representation a client may revalidate has one.
 */
export function sendProblem(res: Response, body: ProblemBody, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const json = JSON.stringify(body);
  res.status(body.status);
  res.setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.setHeader('Content-Length', String(Buffer.byteLength(json)));
  res.setHeader('Cache-Control', CACHE_CONTROL_PROBLEM);
  res.removeHeader('ETag');
  // Node leaves the body out of a response to HEAD.
  res.end(json);
}
