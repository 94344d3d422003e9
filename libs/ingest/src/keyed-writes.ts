interface Running {
  keys: ReadonlySet<string>;
  done: Promise<void>;
}

/**
 * Runs writes up to `writers` at once, started in the order they are submitted. A write waits
 * for every running write that shares a key with it, so that of two writes of one key the one
 * submitted first also commits first; writes with no key in common run side by side, in any
 * order.
 *
 * `import` writes its batches through this, each batch's keys its hit ids and order ids: a line
 * of an id that an earlier, still running batch also holds then waits for that batch, and is
 * found by the duplicate check instead of racing it (SPEC §1: the first imported hit wins).
 */
export class KeyedWrites {
  private readonly running = new Set<Running>();
  private failure: { error: unknown } | undefined;

  constructor(private readonly writers: number) {}

  /**
   * Starts `write` once a writer is free and no running write shares one of `keys`, and returns
   * then, without waiting for the write. After an earlier write failed, starts nothing: waits
   * for the writes still running (none is left behind) and throws that failure.
   */
  async submit(keys: ReadonlySet<string>, write: () => Promise<void>): Promise<void> {
    for (;;) {
      if (this.failure) return this.drain();
      const full = this.running.size >= this.writers;
      const waitFor = [...this.running].filter((r) => full || sharesKey(r.keys, keys));
      if (waitFor.length === 0) break;
      await Promise.race(waitFor.map((r) => r.done));
    }
    const entry: Running = {
      keys,
      // Never rejects: the failure is kept, and thrown by the next submit or by drain.
      done: write().then(
        () => undefined,
        (error: unknown) => {
          this.failure ??= { error };
        },
      ),
    };
    this.running.add(entry);
    // Removed before anything that awaits `done` resumes: reactions run in the order they were added.
    void entry.done.then(() => this.running.delete(entry));
  }

  /** Waits for every running write; throws the first failure. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running].map((r) => r.done));
    if (this.failure) throw this.failure.error;
  }
}

function sharesKey(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const key of small) if (large.has(key)) return true;
  return false;
}
