import type { AuthenticatedRequest } from '@app/auth';
import { wantsCsv } from '@app/common';
import { isValidTimeZone, StatsRepository, todayIn } from '@app/stats';
import { currentReadPin, ReplicaSet } from '@app/db';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor, Optional } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { map, Observable, of } from 'rxjs';
import { ReportCache } from './report-cache.service';

/** What Express's `res.json` sends a JSON body as; a cached JSON text is sent under the same type. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Answers a repeated report request from the cache. The key is the site, the route, every
 * query parameter (sorted), the calendar day the default range is resolved against, and the
 * site's data version, so an answer is reused exactly as long as recomputing it would give
 * the same body. The ETag is derived from that key and the media type, so every API process
 * gives the same strong ETag for the same answer, and Express answers If-None-Match with 304.
 *
 * An answer is cached as the JSON text Express would send, and a JSON answer (hit or miss) is
 * handed to Express as that text: a hit costs no parsing and no serialising of the report. A
 * CSV answer is made from the parsed body by the CsvInterceptor, as before.
 */
@Injectable()
export class ReportCacheInterceptor implements NestInterceptor {
  constructor(
    private readonly cache: ReportCache,
    private readonly stats: StatsRepository,
    @Optional() private readonly replicas?: ReplicaSet,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const site = req.site;
    const zone = typeof req.query.timezone === 'string' ? req.query.timezone : site?.timezone;
    if (!site || !zone || !isValidTimeZone(zone)) return next.handle();
    // Read with the key when the reports are read from the same server (no replicas); a
    // replica's answer must be filed under the replica's version, read where it is read.
    const looked = req.siteLookup?.id === site.id && !this.replicas?.configured ? req.siteLookup : undefined;
    const version = looked ? looked.dataVersion : await this.stats.dataVersion(site.id);
    const csv = wantsCsv(req);
    const key = cacheKey(req, site.id, version, todayIn(zone));
    res.setHeader('ETag', `"${hash(`${key}\u0000${csv ? 'csv' : 'json'}`)}"`);
    const cached = await this.cache.get(key);
    if (cached !== undefined) return of(csv ? JSON.parse(cached) : asJson(res, cached));
    return next.handle().pipe(
      map((body: unknown) => {
        // Part of this answer was read from the primary after its replica failed: it may be
        // newer than the data version read from the replica, so it is neither filed under that
        // version nor given its ETag.
        if (currentReadPin()?.failedOver) {
          res.removeHeader('ETag');
          return body;
        }
        const json = JSON.stringify(body);
        if (json === undefined) return body;
        void this.cache.set(key, json);
        return csv ? body : asJson(res, json);
      }),
    );
  }
}

/** The JSON text as the response body, with the Content-Type `res.json` would have given it. */
function asJson(res: Response, json: string): string {
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  return json;
}

function cacheKey(req: AuthenticatedRequest, siteId: number, version: string, today: string): string {
  const params = Object.entries(req.query)
    .filter(([name]) => name !== 'format')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hash(
    JSON.stringify([
      (req.route as { path?: string } | undefined)?.path ?? req.path,
      siteId,
      version,
      today,
      params,
    ]),
  );
}

const hash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);
