/** How `watch` paces its rounds. */
export interface WatchPace {
  /** Pause after a round that succeeded. */
  intervalMs: number;
  /** Longest pause after failed rounds: the pause doubles from intervalMs with each failure in a row. */
  maxBackoffMs: number;
}

export interface WatchHooks<T> {
  /** A round's result, after each round that succeeded. */
  onRound(result: T, round: number): void;
  /** A failed round (not the first: that one is thrown) and the pause before the next try. */
  onError(error: unknown, retryInMs: number): void;
}

export interface WatchOutcome {
  rounds: number;
  failures: number;
}

/**
 * Runs `round` again and again, pausing between rounds, until `signal` aborts; a round in
 * flight is left to finish (the caller asks it to stop early on its own). The first round is
 * the setup's test: if it fails, the error is thrown, so that a wrong setting ends the process
 * with its message. A later round that fails is reported and tried again after a pause that
 * doubles with each failure in a row, up to `maxBackoffMs`: a database that is away for a while
 * (a restart, a failover) does not end the process, and the next round catches up with
 * whatever queued meanwhile.
 */
export async function watch<T>(
  round: () => Promise<T>,
  pace: WatchPace,
  signal: AbortSignal,
  hooks: WatchHooks<T>,
): Promise<WatchOutcome> {
  const outcome: WatchOutcome = { rounds: 0, failures: 0 };
  let failuresInARow = 0;
  while (!signal.aborted) {
    let pause = pace.intervalMs;
    try {
      const result = await round();
      outcome.rounds++;
      failuresInARow = 0;
      hooks.onRound(result, outcome.rounds);
    } catch (e) {
      if (outcome.rounds === 0 && outcome.failures === 0) throw e;
      outcome.failures++;
      failuresInARow++;
      pause = Math.min(pace.intervalMs * 2 ** failuresInARow, Math.max(pace.maxBackoffMs, pace.intervalMs));
      if (signal.aborted) break;
      hooks.onError(e, pause);
    }
    await pauseUnlessAborted(pause, signal);
  }
  return outcome;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
