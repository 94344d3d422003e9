import { ApiKey, EmbeddedKeyUse, Membership, Site } from '@app/db';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, Repository } from 'typeorm';

/** Persistence of what the guards need: keys by hash, sites, memberships. */
@Injectable()
export class AccessRepository {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
    @Optional() @Inject(EmbeddedKeyUse) private readonly embeddedKeyUse?: EmbeddedKeyUse | null,
  ) {}

  findKeyByHash(keyHash: string): Promise<ApiKey | null> {
    return this.keys.findOne({ where: { keyHash } });
  }

  /** Writes last_used_at unless a newer write already happened (another process may race). */
  async touchKey(id: number, now: Date, notBefore: Date): Promise<void> {
    // The embedded engine's API connection is read-only: this one write has its own handle.
    if (this.embeddedKeyUse) return this.embeddedKeyUse.record(id, now, notBefore);
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
