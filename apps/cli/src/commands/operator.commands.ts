import { DatabaseConnector } from '@app/db';
import { Injectable } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { AdminService } from '../admin.service';
import { Output } from '../output';
import { positiveInt } from './parsers';

interface Opts {
  email?: string;
  name?: string;
  domain?: string;
  timezone?: string;
  currency?: string;
  tracking?: string;
  site?: number;
  user?: number;
  id?: number;
  expiresAt?: string;
  description?: string;
  event?: string;
  path?: string;
}

/** Decorated so that subclasses inherit its constructor's injection metadata. */
@Injectable()
abstract class OperatorCommand extends CommandRunner {
  constructor(
    protected readonly admin: AdminService,
    protected readonly out: Output,
    private readonly db: DatabaseConnector,
  ) {
    super();
  }

  async run(_params: string[], options: Opts): Promise<void> {
    await this.db.connect();
    try {
      await this.execute(options);
    } finally {
      await this.db.close();
    }
  }

  protected abstract execute(options: Opts): Promise<void>;
}

@Command({ name: 'users:create', description: 'Create a user; prints {"id"}' })
export class UsersCreateCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const user = await this.admin.createUser(o.email!);
    this.out.result({ id: user.id }, `created user ${user.id} (${user.email})`);
  }

  @Option({ flags: '--email <email>', description: 'e-mail address of the user', required: true })
  parseEmail(v: string) {
    return v;
  }
}

@Command({
  name: 'sites:create',
  description: 'Create a site; prints {"id"}. Defaults: --timezone UTC, --currency USD, --tracking full',
})
export class SitesCreateCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const site = await this.admin.createSite({
      name: o.name!,
      domain: o.domain!,
      timezone: o.timezone,
      currency: o.currency,
      tracking: o.tracking,
    });
    this.out.result(
      { id: site.id },
      `created site ${site.id} (${site.name}, ${site.timezone}, ${site.currency}, ${site.trackingMode})`,
    );
  }

  @Option({ flags: '--name <name>', description: 'display name', required: true })
  parseName(v: string) {
    return v;
  }

  @Option({ flags: '--domain <domain>', description: 'domain, e.g. shop.example', required: true })
  parseDomain(v: string) {
    return v;
  }

  @Option({ flags: '--timezone <iana>', description: 'IANA time zone of the reports (default UTC)' })
  parseTimezone(v: string) {
    return v;
  }

  @Option({ flags: '--currency <iso4217>', description: 'currency of purchases (default USD)' })
  parseCurrency(v: string) {
    return v;
  }

  @Option({ flags: '--tracking <mode>', description: 'full or cookieless (default full)' })
  parseTracking(v: string) {
    return v;
  }
}

@Command({ name: 'members:add', description: 'Make a user a member of a site (their keys can read it)' })
export class MembersAddCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const added = await this.admin.addMember(o.site!, o.user!);
    this.out.result(
      { site_id: o.site, user_id: o.user, added },
      added
        ? `user ${o.user} is now a member of site ${o.site}`
        : `user ${o.user} already was a member of site ${o.site}`,
    );
  }

  @Option({ flags: '--site <id>', description: 'site id', required: true })
  parseSite(v: string) {
    return positiveInt('--site')(v);
  }

  @Option({ flags: '--user <id>', description: 'user id', required: true })
  parseUser(v: string) {
    return positiveInt('--user')(v);
  }
}

@Command({
  name: 'members:remove',
  description: "Remove a user from a site; the user's keys get 403 on it at once",
})
export class MembersRemoveCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const removed = await this.admin.removeMember(o.site!, o.user!);
    this.out.result(
      { site_id: o.site, user_id: o.user, removed },
      removed
        ? `user ${o.user} removed from site ${o.site}`
        : `user ${o.user} was not a member of site ${o.site}`,
    );
  }

  @Option({ flags: '--site <id>', description: 'site id', required: true })
  parseSite(v: string) {
    return positiveInt('--site')(v);
  }

  @Option({ flags: '--user <id>', description: 'user id', required: true })
  parseUser(v: string) {
    return positiveInt('--user')(v);
  }
}

@Command({
  name: 'keys:create',
  description: 'Create an API key; prints {"id","key"}: the only time the key is shown',
})
export class KeysCreateCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const { key, secret } = await this.admin.createKey(o.user!, o.name, o.expiresAt);
    this.out.result(
      { id: key.id, key: secret },
      `created key ${key.id} (${key.name}). Store it now, it is not shown again:\n${secret}`,
    );
  }

  @Option({ flags: '--user <id>', description: 'owner of the key', required: true })
  parseUser(v: string) {
    return positiveInt('--user')(v);
  }

  @Option({ flags: '--name <name>', description: 'a label for the key (default "default")' })
  parseName(v: string) {
    return v;
  }

  @Option({ flags: '--expires-at <iso>', description: 'expiry, ISO 8601 (default: never)' })
  parseExpiresAt(v: string) {
    return v;
  }
}

@Command({ name: 'keys:revoke', description: 'Revoke an API key: it gets 401 from then on' })
export class KeysRevokeCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const key = await this.admin.revokeKey(o.id!);
    this.out.result({ id: key.id, revoked_at: key.revokedAt?.toISOString() }, `revoked key ${key.id}`);
  }

  @Option({ flags: '--id <id>', description: 'key id', required: true })
  parseId(v: string) {
    return positiveInt('--id')(v);
  }
}

@Command({ name: 'keys:list', description: "List a user's keys (never the key itself, only its prefix)" })
export class KeysListCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const keys = (await this.admin.listKeys(o.user!)).map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.prefix,
      created_at: k.createdAt.toISOString(),
      expires_at: k.expiresAt?.toISOString() ?? null,
      revoked_at: k.revokedAt?.toISOString() ?? null,
      last_used_at: k.lastUsedAt?.toISOString() ?? null,
    }));
    const human = keys.length
      ? keys
          .map(
            (k) =>
              `${k.id}\t${k.prefix}…\t${k.name}\t${k.revoked_at ? 'revoked' : k.expires_at ? `expires ${k.expires_at}` : 'active'}\tlast used ${k.last_used_at ?? 'never'}`,
          )
          .join('\n')
      : `user ${o.user} has no keys`;
    this.out.result({ keys }, human);
  }

  @Option({ flags: '--user <id>', description: 'owner of the keys', required: true })
  parseUser(v: string) {
    return positiveInt('--user')(v);
  }
}

@Command({
  name: 'events:register',
  description: 'Register a custom event name for a site (listed by /events)',
})
export class EventsRegisterCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const event = await this.admin.registerEvent(o.site!, o.name!, o.description);
    this.out.result({ id: event.id }, `registered event ${event.name} for site ${event.siteId}`);
  }

  @Option({ flags: '--site <id>', description: 'site id', required: true })
  parseSite(v: string) {
    return positiveInt('--site')(v);
  }

  @Option({ flags: '--name <name>', description: 'event name as sent by the tracker', required: true })
  parseName(v: string) {
    return v;
  }

  @Option({ flags: '--description <text>', description: 'what the event means' })
  parseDescription(v: string) {
    return v;
  }
}

@Command({
  name: 'goals:create',
  description:
    'Create a conversion goal: an event name (--event) or a path pattern (--path, trailing * = prefix)',
})
export class GoalsCreateCommand extends OperatorCommand {
  protected async execute(o: Opts) {
    const goal = await this.admin.createGoal(o.site!, o.name!, { event: o.event, path: o.path });
    this.out.result(
      { id: goal.id },
      `created goal ${goal.id} (${goal.type} ${goal.matchValue}) for site ${goal.siteId}`,
    );
  }

  @Option({ flags: '--site <id>', description: 'site id', required: true })
  parseSite(v: string) {
    return positiveInt('--site')(v);
  }

  @Option({ flags: '--name <name>', description: 'goal name', required: true })
  parseName(v: string) {
    return v;
  }

  @Option({ flags: '--event <name>', description: 'match event hits with this name' })
  parseEvent(v: string) {
    return v;
  }

  @Option({
    flags: '--path <pattern>',
    description: 'match pageviews of this path; a trailing * matches a prefix',
  })
  parsePath(v: string) {
    return v;
  }
}

export const OPERATOR_COMMANDS = [
  UsersCreateCommand,
  SitesCreateCommand,
  MembersAddCommand,
  MembersRemoveCommand,
  KeysCreateCommand,
  KeysRevokeCommand,
  KeysListCommand,
  EventsRegisterCommand,
  GoalsCreateCommand,
];
