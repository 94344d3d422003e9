import type { Site } from '@app/db';
import type { SiteLookup } from './access.repository';
import type { Request } from 'express';

/** Who is calling: resolved from the API key by the ApiKeyGuard. */
export interface Principal {
  keyId: number;
  userId: number;
}

export interface AuthenticatedRequest extends Request {
  principal?: Principal;
  /** Set by the SiteAccessGuard on site-scoped routes. */
  site?: Site;
  /** The ApiKeyGuard's lookup of the route's site id, with the key (see AccessRepository.findKey). */
  siteLookup?: SiteLookup;
}
