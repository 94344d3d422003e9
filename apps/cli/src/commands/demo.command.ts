import { DatabaseConnector, Membership, Site, User } from '@app/db';
import { HitImporter, SessionAggregator } from '@app/ingest';
import { InjectRepository } from '@nestjs/typeorm';
import { Readable } from 'node:stream';
import { Command, CommandRunner, Option } from 'nest-commander';
import { In, Repository } from 'typeorm';
import { AdminService } from '../admin.service';
import { DemoSite, generateDemoHits } from '../demo/demo-traffic';
import { CliError, Output } from '../output';
import { progressBar } from './progress';
import { positiveInt } from './parsers';

export const DEMO_EMAIL = 'demo@stats.example';

/** The demo sites as the traffic generator sees them: the full-tracking shop and the cookieless blog. */
export function demoSites(sites: Site[]): DemoSite[] {
  return sites.map((site) => ({
    id: site.id,
    kind: site.trackingMode === 'full' ? 'shop' : 'blog',
    timezone: site.timezone,
    currency: site.currency,
    tracking: site.trackingMode,
    sessionsPerDay: site.trackingMode === 'full' ? 220 : 140,
  }));
}

interface DemoOptions {
  days?: number;
  seed?: number;
}

@Command({
  name: 'demo',
  description:
    'Create a demo user, two sites (a full-tracking shop in Europe/Berlin, a cookieless blog in America/New_York), ' +
    'registered events, goals, 90 days of traffic with purchases, and print a new API key. Run again: only a new key.',
})
export class DemoCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly admin: AdminService,
    private readonly importer: HitImporter,
    private readonly aggregator: SessionAggregator,
    private readonly out: Output,
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
  ) {
    super();
  }

  async run(_params: string[], options: DemoOptions): Promise<void> {
    await this.db.connect();
    try {
      const existing = await this.users.findOne({ where: { email: DEMO_EMAIL } });
      if (existing) {
        const siteIds = (await this.memberships.find({ where: { userId: existing.id } })).map(
          (m) => m.siteId,
        );
        const sites = siteIds.length
          ? await this.sites.find({ where: { id: In(siteIds) }, order: { id: 'ASC' } })
          : [];
        const { key, secret } = await this.admin.createKey(existing.id, `demo ${new Date().toISOString()}`);
        this.report(existing.id, sites, key.id, secret, undefined);
        return;
      }
      await this.createDemo(options);
    } finally {
      await this.db.close();
    }
  }

  private async createDemo(options: DemoOptions): Promise<void> {
    const days = options.days ?? 90;
    const user = await this.admin.createUser(DEMO_EMAIL);
    const shop = await this.admin.createSite({
      name: 'Demo Shop',
      domain: 'shop.example',
      timezone: 'Europe/Berlin',
      currency: 'EUR',
      tracking: 'full',
    });
    const blog = await this.admin.createSite({
      name: 'Demo Blog',
      domain: 'blog.example',
      timezone: 'America/New_York',
      currency: 'USD',
      tracking: 'cookieless',
    });
    for (const site of [shop, blog]) await this.admin.addMember(site.id, user.id);
    await this.admin.registerEvent(shop.id, 'add_to_cart', 'A product was added to the cart');
    await this.admin.registerEvent(shop.id, 'signup', 'A visitor created an account');
    await this.admin.registerEvent(shop.id, 'newsletter', 'Newsletter subscription');
    await this.admin.registerEvent(blog.id, 'newsletter', 'Newsletter subscription');
    await this.admin.registerEvent(blog.id, 'share', 'An article was shared');
    await this.admin.registerEvent(blog.id, 'download', 'A PDF guide was downloaded');
    await this.admin.createGoal(shop.id, 'Signed up', { event: 'signup' });
    await this.admin.createGoal(shop.id, 'Reached checkout', { path: '/checkout*' });
    await this.admin.createGoal(shop.id, 'Order completed', { path: '/thank-you' });
    await this.admin.createGoal(blog.id, 'Newsletter', { event: 'newsletter' });
    await this.admin.createGoal(blog.id, 'Read a guide', { path: '/guides/*' });

    const sites = demoSites([shop, blog]);
    const lines = Readable.from(
      (function* () {
        for (const hit of generateDemoHits(sites, days, new Date(), options.seed ?? 42))
          yield `${JSON.stringify(hit)}\n`;
      })(),
    );
    const bar = progressBar('demo import | {value} hits');
    bar?.start(0, 0);
    let rejected = 0;
    const summary = await this.importer.import([{ name: 'demo', stream: lines }], {
      onBytes: () => bar?.increment(),
      onReject: (r) => {
        rejected++;
        this.out.info(`line ${r.line}: ${r.reason}`);
      },
    });
    bar?.stop();
    if (rejected > 0) throw new CliError(`the demo generator produced ${rejected} invalid hits`);
    const aggregated = await this.aggregator.run();
    const { key, secret } = await this.admin.createKey(user.id, 'demo');
    this.report(user.id, [shop, blog], key.id, secret, {
      hits: summary.imported,
      orders: summary.orders,
      sessions: aggregated.sessions,
      import_seconds: Number(summary.seconds.toFixed(3)),
      hits_per_second: Math.round(summary.imported / Math.max(summary.seconds, 0.001)),
      aggregate_seconds: Number(aggregated.seconds.toFixed(3)),
    });
  }

  private report(
    userId: number,
    sites: Site[],
    keyId: number,
    key: string,
    loaded: Record<string, number> | undefined,
  ) {
    this.out.result(
      {
        user_id: userId,
        sites: sites.map((s) => ({
          id: s.id,
          name: s.name,
          timezone: s.timezone,
          tracking_mode: s.trackingMode,
        })),
        key_id: keyId,
        key,
        ...(loaded ? { loaded } : { loaded: null }),
      },
      [
        loaded
          ? `demo data: ${loaded.hits} hits, ${loaded.orders} orders, ${loaded.sessions} sessions ` +
            `(import ${loaded.import_seconds} s, ${loaded.hits_per_second} hits/s; aggregate ${loaded.aggregate_seconds} s)`
          : 'demo data already present; created a new key',
        ...sites.map((s) => `site ${s.id}: ${s.name} (${s.timezone}, ${s.trackingMode})`),
        `API key (shown once): ${key}`,
      ].join('\n'),
    );
  }

  @Option({ flags: '--days <n>', description: 'days of traffic to generate (default 90)' })
  parseDays(v: string) {
    return positiveInt('--days')(v);
  }

  @Option({ flags: '--seed <n>', description: 'random seed (default 42)' })
  parseSeed(v: string) {
    return positiveInt('--seed')(v);
  }
}
