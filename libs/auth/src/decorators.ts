import { ApiProblemResponse } from '@app/common';
import type { Site } from '@app/db';
import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { AuthenticatedRequest, Principal } from './principal';
import { SiteAccessGuard } from './site-access.guard';

export const IS_PUBLIC = 'auth:isPublic';

/** Opens a route without an API key (health checks, docs). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/**
 * Marks a controller or route as scoped to the site in `:id`: the key's user must be a member.
 * Checks run 401 → 404 → 403, before any query parameter is validated (SPEC §3).
 */
export const SiteScoped = () =>
  applyDecorators(
    UseGuards(SiteAccessGuard),
    ApiParam({
      name: 'id',
      description: 'Numeric site id',
      schema: { type: 'integer', minimum: 1, example: 1 },
    }),
    ApiProblemResponse(404, 'No site with that id'),
    ApiProblemResponse(403, "The key's user is not a member of this site"),
  );

/** The site loaded by the SiteAccessGuard. */
export const CurrentSite = createParamDecorator((_: unknown, ctx: ExecutionContext): Site => {
  const site = ctx.switchToHttp().getRequest<AuthenticatedRequest>().site;
  if (!site) throw new Error('CurrentSite used on a route without @SiteScoped()');
  return site;
});

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a public route');
  return principal;
});
