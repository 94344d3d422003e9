import { HttpStatus } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { problem } from './problem';
import { sendProblem } from './send-problem';
import { UNNAMED_PARAMETER } from './validation.pipe';

export interface RequestTargetOptions {
  /** Longest accepted request target (path and query string), in bytes. */
  maxUrlBytes: number;
}

const decodes = (s: string): boolean => {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

/** A parameter name for an error body: decoded when possible, never unbounded. */
const nameOf = (raw: string): string => {
  const name = decodes(raw) ? decodeURIComponent(raw.replace(/\+/g, ' ')) : raw;
  if (name === '') return UNNAMED_PARAMETER;
  return name.length > 100 ? `${name.slice(0, 100)}…` : name;
};

/**
 * Checks the request target before any router sees it: over the length limit is a 414, and a
 * malformed percent-encoding (`%E0%A4%A`, a lone `%`) is a 400 naming the parameter (or
 * `path`). Express would otherwise reject such a path while matching routes, with a 400 that
 * names nothing, or read a malformed query value as literal text.
 *
 * Mounted on the Express instance itself (configureApp), ahead of every route, Swagger's
 * included: Nest's own middleware runs only after route matching has decoded the path.
 */
export function requestTargetMiddleware(options: RequestTargetOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const target = req.originalUrl ?? req.url;
    const bytes = Buffer.byteLength(target);
    if (bytes > options.maxUrlBytes) {
      return sendProblem(
        res,
        problem(
          HttpStatus.URI_TOO_LONG,
          `The request target is ${bytes} bytes long; the limit is ${options.maxUrlBytes}.`,
          { instance: req.path.slice(0, 200) },
        ),
      );
    }
    const at = target.indexOf('?');
    const path = at < 0 ? target : target.slice(0, at);
    const query = at < 0 ? '' : target.slice(at + 1);
    const errors: Array<{ parameter: string; message: string }> = [];
    if (!path.split('/').every(decodes)) {
      errors.push({ parameter: 'path', message: 'the path contains a malformed percent-encoding' });
    }
    for (const pair of query ? query.split('&') : []) {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      if (decodes(key) && decodes(value)) continue;
      const parameter = nameOf(key);
      errors.push({ parameter, message: `${parameter} contains a malformed percent-encoding` });
    }
    if (errors.length > 0) {
      return sendProblem(
        res,
        problem(HttpStatus.BAD_REQUEST, errors.map((e) => e.message).join('; '), {
          instance: decodes(path) ? path : undefined,
          errors,
        }),
      );
    }
    next();
  };
}
