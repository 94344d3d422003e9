import { AppConfig } from '@app/config';
import { ReportSession, Semaphore } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { QueryKiller } from './query-killer';

interface Slot {
  /** Requests of this key or site being served. */
  requests: number;
  /** Pooled connections its report statements may hold at once. */
  connections: Semaphore;
}

export type Admission =
  { admitted: true; session: ReportSession; leave: () => void } | { admitted: false; detail: string };

/**
 * Caps on concurrent report requests, per key and per site (REPORT_CONCURRENCY_PER_KEY,
 * REPORT_CONCURRENCY_PER_SITE): one request over a cap is refused at once (429), and the
 * statements of the admitted ones share as many pooled connections as the cap, so that one
 * key or one site can never hold more of the pool than its cap, however many statements a
 * report runs in parallel. Counted per process, like the pool it protects.
 */
@Injectable()
export class ReportConcurrency {
  private readonly keys = new Map<number, Slot>();
  private readonly sites = new Map<number, Slot>();
  /** Report statements of this process at once: the pool less two, for keys, sites and health. */
  private readonly statements: Semaphore;
  /** Arrival number of the next admitted request: its statements' priority. */
  private arrivals = 0;
  readonly perKey: number;
  readonly perSite: number;

  constructor(
    config: AppConfig,
    private readonly killer: QueryKiller,
  ) {
    this.perKey = config.limits.concurrencyPerKey;
    this.perSite = config.limits.concurrencyPerSite;
    // With replicas each read server has a pool of this size, and a request reads one of them.
    const servers = Math.max(1, config.replicas.locations.length);
    this.statements = new Semaphore(Math.max(1, config.dbPoolSize - 2) * servers);
  }

  enter(keyId: number, siteId: number | undefined): Admission {
    const key = this.slot(this.keys, keyId, this.perKey);
    const site = siteId === undefined ? undefined : this.slot(this.sites, siteId, this.perSite);
    if (key.requests >= this.perKey) {
      this.drop();
      return {
        admitted: false,
        detail:
          `This key already has ${key.requests} report requests running, the most allowed at a time ` +
          `(REPORT_CONCURRENCY_PER_KEY=${this.perKey}). Retry when one has finished.`,
      };
    }
    if (site && site.requests >= this.perSite) {
      this.drop();
      return {
        admitted: false,
        detail:
          `Site ${siteId} already has ${site.requests} report requests running, the most allowed at a time ` +
          `(REPORT_CONCURRENCY_PER_SITE=${this.perSite}). Retry when one has finished.`,
      };
    }
    key.requests++;
    if (site) site.requests++;
    const session = new ReportSession(
      site ? [key.connections, site.connections, this.statements] : [key.connections, this.statements],
      (threadId) => this.killer.kill(threadId),
      this.arrivals++,
    );
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      key.requests--;
      if (site) site.requests--;
      this.drop();
    };
    return { admitted: true, session, leave };
  }

  /** The process's report connections: how many, how many held, and statements waiting for one. */
  get statementPermits(): { max: number; held: number; waiting: number } {
    return { max: this.statements.size, held: this.statements.holders, waiting: this.statements.waiting };
  }

  /** Requests running now for a key (for tests and metrics). */
  runningForKey(keyId: number): number {
    return this.keys.get(keyId)?.requests ?? 0;
  }

  private slot(map: Map<number, Slot>, id: number, cap: number): Slot {
    let slot = map.get(id);
    if (!slot) {
      slot = { requests: 0, connections: new Semaphore(cap) };
      map.set(id, slot);
    }
    return slot;
  }

  /** Forgets keys and sites with nothing running, so that the maps stay as small as the load. */
  private drop(): void {
    for (const map of [this.keys, this.sites])
      for (const [id, slot] of map) if (slot.requests === 0 && slot.connections.idle) map.delete(id);
  }
}
