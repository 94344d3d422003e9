import { InvalidParametersException, problem } from '@app/common';
import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  HttpStatus,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { AccessRepository } from './access.repository';
import type { AuthenticatedRequest } from './principal';

const MAX_SITE_ID = 4_294_967_295;

/** Parses a path `{id}`: decimal digits only, within the id column's range. */
export function parseSiteId(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !/^[1-9]\d{0,9}$/.test(raw)) return undefined;
  const id = Number(raw);
  return id <= MAX_SITE_ID ? id : undefined;
}

/**
 * Resolves `:id` to a site the key's user is a member of, right now (a removed membership
 * is a 403 on the next request). Order: 400 bad id, 404 no such site, 403 not a member.
 */
@Injectable()
export class SiteAccessGuard implements CanActivate {
  constructor(private readonly access: AccessRepository) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = req.principal;
    if (!principal) throw new Error('SiteAccessGuard needs the ApiKeyGuard to run first');

    const id = parseSiteId(req.params.id);
    if (id === undefined) throw InvalidParametersException.of('id', 'id must be a positive integer site id');

    const site = await this.access.findSite(id);
    if (!site) throw new NotFoundException(problem(HttpStatus.NOT_FOUND, `No site with id ${id}.`));
    if (!(await this.access.isMember(site.id, principal.userId))) {
      throw new ForbiddenException(problem(HttpStatus.FORBIDDEN, `This key cannot read site ${id}.`));
    }
    req.site = site;
    return true;
  }
}
