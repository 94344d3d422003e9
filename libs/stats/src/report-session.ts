import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Counting semaphore: at most `size` holders. Waiters are served by `priority`, lowest first,
 * and in arrival order among equals (a report session's priority is its arrival number, so the
 * statements of earlier requests go first).
 */
export class Semaphore {
  private used = 0;
  /** By priority, then arrival. */
  private readonly waiters: Array<{ priority: number; grant: () => void; fail: (e: unknown) => void }> = [];

  constructor(readonly size: number) {}

  /** Resolves with the release function once a permit is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal, priority = 0): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new ClientGoneError());
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        priority,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
        fail: reject,
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(new ClientGoneError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // After every waiter of the same or a lower priority (queues are short: a few hundred at most).
      let at = this.waiters.length;
      while (at > 0 && this.waiters[at - 1].priority > priority) at--;
      this.waiters.splice(at, 0, waiter);
    });
  }

  /** No holder and no waiter: the semaphore can be dropped. */
  get idle(): boolean {
    return this.used === 0 && this.waiters.length === 0;
  }

  get holders(): number {
    return this.used;
  }

  /** Waiters right now (for tests and metrics). */
  get waiting(): number {
    return this.waiters.length;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.waiters.length === 0) {
        this.used--;
        return;
      }
      // Handed on after the promise callbacks now due: the holder's own next statement (a
      // report's next stage) asks for a permit in them, and may come before those waiting.
      setImmediate(() => {
        const next = this.waiters.shift();
        if (next) next.grant();
        else this.used--;
      });
    };
  }
}

/** The client of a report request went away; its queries were stopped. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection; its report queries were stopped');
  }
}

/**
 * One report request as ReportDb sees it: the connection permits it must hold for each
 * statement (its key's and its site's, so that a key or a site never holds more pooled
 * connections than its cap, whatever a report runs in parallel; then the process's, so that
 * reports never hold the whole pool), and the database threads running its statements, so
 * that they can be stopped (KILL QUERY) when the client goes away.
 *
 * `priority` orders its waits for a permit: the requests' arrival order. A report runs its
 * statements in stages (the overview's visitors wait for its session totals), and served in
 * the order statements asked, every stage of every request would queue behind the first
 * stages of all the requests that came after it: under more requests than the pool can serve,
 * each would take longer than its client waits and none would be answered. Served by request,
 * the earliest requests finish first and the rest queue behind them.
 */
export class ReportSession {
  private readonly controller = new AbortController();
  private readonly threads = new Set<number>();

  constructor(
    private readonly permits: Semaphore[],
    private readonly killQuery: (threadId: number) => void,
    private readonly priority = 0,
  ) {}

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** A permit of every semaphore, in one fixed order (no deadlock); the release gives all back. */
  async connectionPermit(): Promise<() => void> {
    const releases: Array<() => void> = [];
    try {
      for (const s of this.permits) releases.push(await s.acquire(this.controller.signal, this.priority));
    } catch (e) {
      releases.reverse().forEach((r) => r());
      throw this.aborted ? new ClientGoneError() : e;
    }
    return () => releases.reverse().forEach((r) => r());
  }

  /** Runs one statement on database thread `threadId`, stopping it if the request is aborted. */
  async onThread<T>(threadId: number | undefined, statement: () => Promise<T>): Promise<T> {
    if (this.aborted) throw new ClientGoneError();
    if (threadId !== undefined) this.threads.add(threadId);
    try {
      return await statement();
    } catch (e) {
      throw this.aborted ? new ClientGoneError() : e;
    } finally {
      if (threadId !== undefined) this.threads.delete(threadId);
    }
  }

  /** The client went away: no new statement starts, waiting ones give up, running ones are killed. */
  abort(): void {
    if (this.aborted) return;
    this.controller.abort(new ClientGoneError());
    for (const id of this.threads) this.killQuery(id);
  }
}

/** The report session of the request being served, if any (set by the API's concurrency interceptor). */
export const reportSessions = new AsyncLocalStorage<ReportSession>();
