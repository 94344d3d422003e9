import { ApiKey, Membership, Site } from '@app/db';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, Repository } from 'typeorm';

/** Persistence of what the guards need: keys by hash, sites, memberships. */
@Injectable()
export class AccessRepository {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
  ) {}

  findKeyByHash(keyHash: string): Promise<ApiKey | null> {
    return this.keys.findOne({ where: { keyHash } });
  }

  /** Writes last_used_at unless a newer write already happened (another process may race). */
  async touchKey(id: number, now: Date, notBefore: Date): Promise<void> {
    await this.keys.update(
      [
        { id, lastUsedAt: IsNull() },
        { id, lastUsedAt: LessThan(notBefore) },
      ],
      {
        lastUsedAt: now,
      },
    );
  }

  findSite(id: number): Promise<Site | null> {
    return this.sites.findOne({ where: { id } });
  }

  async isMember(siteId: number, userId: number): Promise<boolean> {
    return (await this.memberships.count({ where: { siteId, userId } })) > 0;
  }
}
