import { generateApiKey } from '@app/auth/api-key';
import { ApiKey, Goal, GoalType, Membership, RegisteredEvent, Site, User } from '@app/db';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IANAZone } from 'luxon';
import { Repository } from 'typeorm';
import { CliError } from './output';

/** Length in characters, as VARCHAR and the hit format count it (not UTF-16 units). */
const chars = (s: string): number => Array.from(s).length;

export interface NewSite {
  name: string;
  domain: string;
  timezone?: string;
  currency?: string;
  tracking?: string;
}

/** The operator's writes: users, sites, memberships, keys, registered events and goals. */
@Injectable()
export class AdminService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    @InjectRepository(RegisteredEvent) private readonly events: Repository<RegisteredEvent>,
    @InjectRepository(Goal) private readonly goals: Repository<Goal>,
  ) {}

  async createUser(email: string): Promise<User> {
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 320)
      throw new CliError(`invalid --email: ${email}`);
    if (await this.users.exists({ where: { email } }))
      throw new CliError(`a user with email ${email} already exists`);
    return this.users.save(this.users.create({ email, createdAt: new Date() }));
  }

  async createSite(input: NewSite): Promise<Site> {
    const timezone = input.timezone ?? 'UTC';
    const currency = input.currency ?? 'USD';
    const tracking = input.tracking ?? 'full';
    if (!input.name?.trim() || input.name.length > 255) throw new CliError('--name must be 1–255 characters');
    if (!input.domain?.trim() || input.domain.length > 255)
      throw new CliError('--domain must be 1–255 characters');
    if (!IANAZone.isValidZone(timezone))
      throw new CliError(`--timezone must be an IANA zone such as Europe/Berlin, got ${timezone}`);
    if (!/^[A-Z]{3}$/.test(currency))
      throw new CliError(`--currency must be an ISO 4217 code such as EUR, got ${currency}`);
    if (tracking !== 'full' && tracking !== 'cookieless')
      throw new CliError('--tracking must be full or cookieless');
    return this.sites.save(
      this.sites.create({
        name: input.name,
        domain: input.domain,
        timezone,
        currency,
        trackingMode: tracking,
        createdAt: new Date(),
      }),
    );
  }

  async addMember(siteId: number, userId: number): Promise<boolean> {
    await this.requireSite(siteId);
    await this.requireUser(userId);
    if (await this.memberships.exists({ where: { siteId, userId } })) return false;
    await this.memberships.insert({ siteId, userId, createdAt: new Date() });
    return true;
  }

  async removeMember(siteId: number, userId: number): Promise<boolean> {
    await this.requireSite(siteId);
    await this.requireUser(userId);
    const result = await this.memberships.delete({ siteId, userId });
    return (result.affected ?? 0) > 0;
  }

  async createKey(
    userId: number,
    name?: string,
    expiresAt?: string,
  ): Promise<{ key: ApiKey; secret: string }> {
    await this.requireUser(userId);
    let expires: Date | null = null;
    if (expiresAt !== undefined) {
      expires = new Date(expiresAt);
      if (!/^\d{4}-\d{2}-\d{2}/.test(expiresAt) || Number.isNaN(expires.getTime())) {
        throw new CliError(`--expires-at must be an ISO 8601 date or timestamp, got ${expiresAt}`);
      }
    }
    const generated = generateApiKey();
    const key = await this.keys.save(
      this.keys.create({
        userId,
        name: name ?? 'default',
        prefix: generated.prefix,
        keyHash: generated.hash,
        createdAt: new Date(),
        expiresAt: expires,
        revokedAt: null,
        lastUsedAt: null,
      }),
    );
    return { key, secret: generated.key };
  }

  async revokeKey(id: number): Promise<ApiKey> {
    const key = await this.keys.findOne({ where: { id } });
    if (!key) throw new CliError(`no API key with id ${id}`);
    if (!key.revokedAt) {
      key.revokedAt = new Date();
      await this.keys.save(key);
    }
    return key;
  }

  async listKeys(userId: number): Promise<ApiKey[]> {
    await this.requireUser(userId);
    return this.keys.find({ where: { userId }, order: { id: 'ASC' } });
  }

  async registerEvent(siteId: number, name: string, description?: string): Promise<RegisteredEvent> {
    await this.requireSite(siteId);
    if (!name || chars(name) > 255) throw new CliError('--name must be 1–255 characters');
    if (description !== undefined && chars(description) > 1000)
      throw new CliError('--description must be at most 1000 characters');
    if (await this.events.exists({ where: { siteId, name } }))
      throw new CliError(`event ${name} is already registered for site ${siteId}`);
    return this.events.save(
      this.events.create({ siteId, name, description: description ?? null, registeredAt: new Date() }),
    );
  }

  async createGoal(siteId: number, name: string, match: { event?: string; path?: string }): Promise<Goal> {
    await this.requireSite(siteId);
    if (!name || chars(name) > 255) throw new CliError('--name must be 1–255 characters');
    if ((match.event === undefined) === (match.path === undefined))
      throw new CliError('give exactly one of --event or --path');
    let type: GoalType;
    let value: string;
    if (match.event !== undefined) {
      if (!match.event || chars(match.event) > 255) throw new CliError('--event must be 1–255 characters');
      type = 'event';
      value = match.event;
    } else {
      if (!match.path!.startsWith('/') || chars(match.path!) > 2048)
        throw new CliError('--path must start with / (a trailing * matches a prefix)');
      type = 'path';
      value = match.path!;
    }
    return this.goals.save(
      this.goals.create({ siteId, name, type, matchValue: value, createdAt: new Date() }),
    );
  }

  private async requireSite(id: number): Promise<void> {
    if (!(await this.sites.exists({ where: { id } }))) throw new CliError(`no site with id ${id}`);
  }

  private async requireUser(id: number): Promise<void> {
    if (!(await this.users.exists({ where: { id } }))) throw new CliError(`no user with id ${id}`);
  }
}
