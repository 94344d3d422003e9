import { bearerToken, isWellFormedApiKey } from '@app/auth';
import { problem, sendProblem } from '@app/common';
import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  type ThrottlerModuleOptions,
} from '@nestjs/throttler';
import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import type { RateLimitStore, WindowState } from './rate-limit.store';

/**
 * The bucket of a key: a digest of the presented key, never the key itself (it ends up in
 * Redis), and not the digest stored in api_keys either.
 */
export function keyBucket(token: string): string {
  return `k:${createHash('sha256').update(`rate-limit:${token}`).digest('base64url').slice(0, 32)}`;
}

export function addressBucket(ip: string | undefined): string {
  return `ip:${normalizeIp(ip ?? 'unknown')}`;
}

/**
 * Rate limits on every /api/v1 request, before the 405 check and before any guard, so that
 * every response there carries RateLimit-* headers and no flood reaches the key lookup
 * unmetered. (A ThrottlerGuard would miss the 404s and 405s, which never reach a guard.)
 *
 * A request presenting a well-formed key counts against that key, across every route and
 * every API process sharing Redis; any other request counts against its client address. A
 * client guessing keys would get a fresh bucket per guess, so each 401 also counts against
 * its address, and an address over the limit gets 429 whatever key it presents.
 */
@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  private readonly limit: number;
  private readonly ttl: number;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly store: RateLimitStore,
  ) {
    const throttler = (Array.isArray(options) ? options : options.throttlers)[0];
    this.limit = Number(throttler.limit);
    this.ttl = Number(throttler.ttl);
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const address = addressBucket(req.ip);
    const token = bearerToken(req.headers.authorization);
    let state: WindowState & { isBlocked: boolean };
    if (token !== undefined && isWellFormedApiKey(token)) {
      const failures = await this.store.peek(address);
      if (failures.totalHits >= this.limit) {
        state = { ...failures, totalHits: failures.totalHits + 1, isBlocked: true };
      } else {
        state = await this.store.increment(keyBucket(token), this.ttl, this.limit, this.ttl, 'default');
        res.once('finish', () => {
          if (res.statusCode === Number(HttpStatus.UNAUTHORIZED))
            void this.store.increment(address, this.ttl, this.limit, this.ttl, 'default');
        });
      }
    } else {
      state = await this.store.increment(address, this.ttl, this.limit, this.ttl, 'default');
    }

    res.setHeader('RateLimit-Limit', String(this.limit));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, this.limit - state.totalHits)));
    res.setHeader('RateLimit-Reset', String(state.timeToExpire));
    res.setHeader('RateLimit-Policy', `${this.limit};w=${Math.round(this.ttl / 1000)}`);
    if (!state.isBlocked) return next();

    sendProblem(
      res,
      problem(
        HttpStatus.TOO_MANY_REQUESTS,
        `More than ${this.limit} requests in ${Math.round(this.ttl / 1000)} s. Retry after ${state.timeToExpire} s.`,
        { instance: req.path },
      ),
      { 'Retry-After': String(state.timeToExpire) },
    );
  }
}
