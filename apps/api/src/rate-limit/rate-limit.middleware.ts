import { AuthFailures, bearerToken, isWellFormedApiKey } from '@app/auth';
import { problem, sendProblem, TooManyRequestsProblem } from '@app/common';
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
 * A request presenting a well-formed key counts against that key only, across every route
 * and every API process sharing Redis; any other request counts against its client address.
 * A client guessing keys would get a fresh bucket per guess, so the ApiKeyGuard charges each
 * refused key to the address as well (AuthFailureCounter), atomically, and answers 429
 * instead of 401 once the address is over its limit. A valid key is never refused because of
 * its address: keyless requests or guesses from the same NAT do not lock it out.
 */
@Injectable()
export class RateLimitMiddleware implements NestMiddleware {
  readonly limit: number;
  readonly ttl: number;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() private readonly store: RateLimitStore,
  ) {
    const throttler = (Array.isArray(options) ? options : options.throttlers)[0];
    this.limit = Number(throttler.limit);
    this.ttl = Number(throttler.ttl);
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    const token = bearerToken(req.headers.authorization);
    const bucket =
      token !== undefined && isWellFormedApiKey(token) ? keyBucket(token) : addressBucket(req.ip);
    const state = await this.count(bucket);
    for (const [name, value] of Object.entries(this.headers(state))) res.setHeader(name, value);
    if (!state.isBlocked) return next();
    sendProblem(res, this.problem(state, req.path), { 'Retry-After': String(state.timeToExpire) });
  }

  /** One hit on `bucket`, counted atomically by the store. */
  count(bucket: string): Promise<WindowState & { isBlocked: boolean }> {
    return this.store.increment(bucket, this.ttl, this.limit, this.ttl, 'default');
  }

  headers(state: WindowState): Record<string, string> {
    return {
      'RateLimit-Limit': String(this.limit),
      'RateLimit-Remaining': String(Math.max(0, this.limit - state.totalHits)),
      'RateLimit-Reset': String(state.timeToExpire),
      'RateLimit-Policy': `${this.limit};w=${Math.round(this.ttl / 1000)}`,
    };
  }

  detail(state: WindowState): string {
    return `More than ${this.limit} requests in ${Math.round(this.ttl / 1000)} s. Retry after ${state.timeToExpire} s.`;
  }

  private problem(state: WindowState, instance: string) {
    return problem(HttpStatus.TOO_MANY_REQUESTS, this.detail(state), { instance });
  }
}

/**
 * The ApiKeyGuard's AUTH_FAILURES: a refused key counts against the client address with the
 * same atomic increment as every other hit (INCR in Redis, one synchronous step in memory),
 * and the request is answered 429 rather than 401 when that hit is over the limit. Counting
 * before answering is what keeps 50 concurrent guesses from getting more 401s than the limit.
 */
@Injectable()
export class AuthFailureCounter implements AuthFailures {
  constructor(private readonly limiter: RateLimitMiddleware) {}

  async record(req: Request): Promise<void> {
    const state = await this.limiter.count(addressBucket(req.ip));
    if (!state.isBlocked) return;
    throw new TooManyRequestsProblem(
      `${this.limiter.detail(state)} (refused keys from this address count against it)`,
      state.timeToExpire,
      this.limiter.headers(state),
    );
  }
}
