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
import { parseSiteId } from './site-id';

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

    // Looked up with the key by the ApiKeyGuard, in the same statement; otherwise here.
    const looked = req.siteLookup?.id === id ? req.siteLookup : undefined;
    const site = looked ? looked.site : await this.access.findSite(id);
    if (!site) throw new NotFoundException(problem(HttpStatus.NOT_FOUND, `No site with id ${id}.`));
    if (!(looked ? looked.member : await this.access.isMember(site.id, principal.userId))) {
      throw new ForbiddenException(problem(HttpStatus.FORBIDDEN, `This key cannot read site ${id}.`));
    }
    req.site = site;
    return true;
  }
}
