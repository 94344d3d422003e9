import { DatabaseConnector, fromStoredDatetime, Membership, Site, User } from '@app/db';
import { HitImporter, SessionAggregator } from '@app/ingest';
import { InjectRepository } from '@nestjs/typeorm';
import { DateTime } from 'luxon';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, CommandRunner, Option } from 'nest-commander';
import { In, Repository } from 'typeorm';
import { DemoHit, generateDemoHits, rng, sessionHits } from '../demo/demo-traffic';
import { CliError, Output } from '../output';
import { DEMO_EMAIL, demoSites } from './demo.command';
import { positiveInt } from './parsers';

interface LiveOptions {
  historyDays?: number;
  rate?: number;
  interval?: number;
  ticks?: number;
  seed?: number;
}

/** Days of history the `demo` command loads; older days are this command's `--history-days`. */
const RECENT_DAYS = 90;
/** Days of history loaded per step, between two live ticks. */
const HISTORY_CHUNK_DAYS = 10;
const AGGREGATE_EVERY_MS = 60_000;

/**
 * Keeps the demo alive beside the API (`npm run start:demo` runs it): new visitors arrive
 * every few seconds and their pageviews, events and purchases are written as they happen, so
 * the realtime report moves; `aggregate` runs every minute so the other reports follow. With
 * `--history-days`, it first fills in the days before the demo's 90 (in steps, between live
 * ticks), so that `compare=year_over_year` has a year to compare with.
 */
@Command({
  name: 'demo:live',
  description:
    'Keep the demo sites alive: visitors arrive every few seconds (hits written as they happen), aggregate every ' +
    'minute, until Ctrl-C. --history-days 400 first fills in the days before the demo’s 90. Run `demo` first.',
})
export class DemoLiveCommand extends CommandRunner {
  private stopping = false;

  constructor(
    private readonly db: DatabaseConnector,
    private readonly importer: HitImporter,
    private readonly aggregator: SessionAggregator,
    private readonly out: Output,
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(Membership) private readonly memberships: Repository<Membership>,
    @InjectRepository(Site) private readonly sites: Repository<Site>,
  ) {
    super();
  }

  async run(_params: string[], options: LiveOptions): Promise<void> {
    const ds = await this.db.connect();
    const stop = () => {
      this.stopping = true;
      this.aggregator.requestStop();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    try {
      const user = await this.users.findOne({ where: { email: DEMO_EMAIL } });
      if (!user) throw new CliError('no demo data: run `demo` first');
      const siteIds = (await this.memberships.find({ where: { userId: user.id } })).map((m) => m.siteId);
      const sites = demoSites(await this.sites.find({ where: { id: In(siteIds) }, order: { id: 'ASC' } }));
      const rate = options.rate ?? 6;
      const interval = (options.interval ?? 5) * 1000;
      const seed = options.seed ?? Date.now() % 1_000_000;
      const random = rng(seed);

      // History: the days from RECENT_DAYS back to historyDays back, unless already there.
      const historyDays = options.historyDays ?? 0;
      const oldest: Array<{ oldest: Date | string | null }> = await ds.query(
        `SELECT MIN(ts) AS oldest FROM hits WHERE site_id IN (${sites.map(() => '?').join(',')})`,
        sites.map((s) => s.id),
      );
      // MIN() of a DATETIME: a Date from mysql2, the stored UTC text from SQLite.
      const first = oldest[0]?.oldest;
      const loadedBack = first
        ? Math.floor(
            (Date.now() - (typeof first === 'string' ? fromStoredDatetime(first) : first).getTime()) /
              86_400_000,
          )
        : 0;
      // Quiet while it runs (start:demo prints its banner last); the result says what it did.
      let nextBack = Math.max(RECENT_DAYS, loadedBack + 1);

      const prefix = `l${Date.now().toString(36)}-`;
      let hitNo = 0;
      let pending: DemoHit[] = [];
      const totals = { ticks: 0, live_sessions: 0, live_hits: 0, history_hits: 0, aggregated_sessions: 0 };
      let lastAggregate = Date.now();
      const startedAt = Date.now().toString(36);

      while (!this.stopping) {
        const now = new Date();
        // New visitors since the last tick, per site in proportion to its traffic.
        if (rate > 0) {
          for (const site of sites) {
            const expected = ((rate * interval) / 60_000) * (site.sessionsPerDay / sites[0].sessionsPerDay);
            const arrivals = Math.floor(expected) + (random() < expected % 1 ? 1 : 0);
            for (let i = 0; i < arrivals; i++) {
              const start = DateTime.fromMillis(now.getTime() - Math.floor(random() * interval), {
                zone: site.timezone,
              });
              pending.push(
                ...sessionHits(random, site, {
                  start,
                  // Hits are written when their time comes, not clamped to now.
                  now: new Date(now.getTime() + 86_400_000),
                  people: Math.max(50, Math.round(site.sessionsPerDay * RECENT_DAYS * 0.45)),
                  day: start.toISODate()!,
                  index: totals.live_sessions++,
                  next: () => ++hitNo,
                  idPrefix: prefix,
                }),
              );
            }
          }
        }
        const due = pending.filter((h) => Date.parse(h.ts as string) <= now.getTime());
        pending = pending.filter((h) => Date.parse(h.ts as string) > now.getTime());
        if (due.length > 0) totals.live_hits += await this.importHits(due);

        const hadHistory = nextBack < historyDays;
        if (hadHistory) {
          const oldestBack = Math.min(historyDays - 1, nextBack + HISTORY_CHUNK_DAYS - 1);
          const hits = [
            ...generateDemoHits(sites, historyDays, now, seed + nextBack, {
              oldestBack,
              newestBack: nextBack,
              idPrefix: `y${startedAt}-${nextBack}-`,
            }),
          ];
          totals.history_hits += await this.importHits(hits);
          nextBack = oldestBack + 1;
        }
        const historyLeft = nextBack < historyDays;
        if (hadHistory && !historyLeft)
          this.out.info(`demo:live: history loaded (${totals.history_hits} hits)`);

        totals.ticks++;
        const done = options.ticks !== undefined && totals.ticks >= options.ticks;
        if (done || (hadHistory && !historyLeft) || Date.now() - lastAggregate >= AGGREGATE_EVERY_MS) {
          totals.aggregated_sessions += (await this.aggregator.run()).sessions;
          lastAggregate = Date.now();
        }
        if (done || (rate === 0 && !historyLeft)) break;
        if (!historyLeft) await sleep(interval);
      }
      this.out.result(
        totals,
        `demo:live: ${totals.live_sessions} live sessions (${totals.live_hits} hits), ` +
          `${totals.history_hits} history hits, ${totals.aggregated_sessions} sessions aggregated`,
      );
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await this.db.close();
    }
  }

  private async importHits(hits: DemoHit[]): Promise<number> {
    let rejected = 0;
    const summary = await this.importer.import(
      [{ name: 'demo:live', stream: Readable.from(hits.map((h) => `${JSON.stringify(h)}\n`)) }],
      {
        onReject: (r) => {
          rejected++;
          this.out.info(`line ${r.line}: ${r.reason}`);
        },
      },
    );
    if (rejected > 0) throw new CliError(`the demo generator produced ${rejected} invalid hits`);
    return summary.imported;
  }

  @Option({
    flags: '--history-days <n>',
    description: 'first fill in history up to n days back (default: none)',
  })
  parseHistoryDays(v: string): number {
    return positiveInt('--history-days')(v);
  }

  @Option({ flags: '--rate <n>', description: 'new visitors per minute on the shop, 0 for none (default 6)' })
  parseRate(v: string): number {
    if (!/^\d+$/.test(v)) throw new CliError('--rate must be a whole number ≥ 0');
    return Number(v);
  }

  @Option({ flags: '--interval <seconds>', description: 'seconds between two ticks (default 5)' })
  parseInterval(v: string): number {
    return positiveInt('--interval')(v);
  }

  @Option({ flags: '--ticks <n>', description: 'stop after n ticks (default: run until stopped)' })
  parseTicks(v: string): number {
    return positiveInt('--ticks')(v);
  }

  @Option({ flags: '--seed <n>', description: 'random seed (default: from the clock)' })
  parseSeed(v: string): number {
    return positiveInt('--seed')(v);
  }
}
