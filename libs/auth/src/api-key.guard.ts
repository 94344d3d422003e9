import { problem } from '@app/common';
import {
  CanActivate,
  ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  Optional,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Reflector } from '@nestjs/core';
import { AccessRepository } from './access.repository';
import { bearerToken, hashApiKey, isWellFormedApiKey } from './api-key';
import { IS_PUBLIC } from './decorators';
import { parseSiteId } from './site-id';
import type { AuthenticatedRequest } from './principal';

const TOUCH_INTERVAL_MS = 60_000;

/** Where the guard reports a refused key: the rate limiter charges it to the client's address. */
export const AUTH_FAILURES = Symbol('AUTH_FAILURES');

export interface AuthFailures {
  /**
   * Counts one refused key against the client, atomically; throws a 429 instead when the
   * client is over its limit, so that no more 401s are answered than the limit allows.
   */
  record(req: Request, res: Response): Promise<void>;
}

function unauthorized(detail: string): UnauthorizedException {
  return new UnauthorizedException(problem(HttpStatus.UNAUTHORIZED, detail));
}

/**
 * The one API-key guard, registered globally. It finds the key by the hash of the bearer
 * token, never by the token itself, and writes last_used_at at most once a minute per key.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);
  private readonly lastTouched = new Map<number, number>();

  constructor(
    private readonly reflector: Reflector,
    private readonly access: AccessRepository,
    @Optional() @Inject(AUTH_FAILURES) private readonly failures?: AuthFailures,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;

    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = req.headers.authorization;
    if (header === undefined) throw unauthorized('Send an API key as `Authorization: Bearer <key>`.');
    const token = bearerToken(header);
    if (token === undefined) throw unauthorized('The Authorization header must use the Bearer scheme.');
    if (!isWellFormedApiKey(token)) throw unauthorized('The API key is malformed.');

    // On a site's route, the site, the membership and the data version come in the same
    // statement (SiteAccessGuard and the report cache use them); a malformed id is the
    // SiteAccessGuard's 400, after this guard's 401s.
    const key = await this.access.findKey(hashApiKey(token), parseSiteId(req.params?.id));
    const now = new Date();
    const refusal = !key
      ? 'The API key is not valid.'
      : key.revokedAt
        ? 'The API key has been revoked.'
        : key.expiresAt && key.expiresAt.getTime() <= now.getTime()
          ? 'The API key has expired.'
          : undefined;
    if (refusal !== undefined || !key) {
      await this.failures?.record(req, context.switchToHttp().getResponse<Response>());
      throw unauthorized(refusal ?? 'The API key is not valid.');
    }

    req.principal = { keyId: key.id, userId: key.userId };
    req.siteLookup = key.siteLookup;
    this.touch(key.id, now);
    return true;
  }

  /** Fire-and-forget: a failed bookkeeping write must not fail the request. */
  private touch(keyId: number, now: Date): void {
    const last = this.lastTouched.get(keyId);
    if (last !== undefined && now.getTime() - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now.getTime());
    this.access
      .touchKey(keyId, now, new Date(now.getTime() - TOUCH_INTERVAL_MS))
      .catch((e: unknown) => this.logger.warn(`could not record last use of key ${keyId}: ${String(e)}`));
  }
}
