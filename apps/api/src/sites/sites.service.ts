import type { Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { SiteDto, SitesResponseDto } from './dto/site.dto';
import { SitesRepository } from './sites.repository';

export function toSiteDto(site: Site): SiteDto {
  return {
    id: site.id,
    name: site.name,
    domain: site.domain,
    timezone: site.timezone,
    currency: site.currency,
    tracking_mode: site.trackingMode,
    created_at: site.createdAt.toISOString(),
  };
}

@Injectable()
export class SitesService {
  constructor(private readonly sites: SitesRepository) {}

  async list(userId: number, page: number, limit: number): Promise<SitesResponseDto> {
    const [rows, total] = await this.sites.pageForUser(userId, (page - 1) * limit, limit);
    return { data: rows.map(toSiteDto), meta: { page, limit, total } };
  }
}
