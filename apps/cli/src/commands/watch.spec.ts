import { pauseUnlessAborted, watch } from './watch';

/** A round function that plays `script` (a value to return or an error to throw) then aborts. */
function scripted(script: Array<number | Error>, stop: AbortController) {
  let i = 0;
  return () => {
    const step = script[i++];
    if (i >= script.length) stop.abort();
    return step instanceof Error ? Promise.reject(step) : Promise.resolve(step);
  };
}

describe('watch (aggregate --watch)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Runs watch to its end, advancing the fake clock whenever it pauses: its outcome, rounds and errors. */
  async function run(script: Array<number | Error>, intervalMs = 1000, maxBackoffMs = 8000) {
    const stop = new AbortController();
    const rounds: Array<[number, number]> = [];
    const errors: Array<[string, number]> = [];
    const done = watch(scripted(script, stop), { intervalMs, maxBackoffMs }, stop.signal, {
      onRound: (result, round) => rounds.push([result, round]),
      onError: (e, retryInMs) => errors.push([(e as Error).message, retryInMs]),
    });
    let outcome: Awaited<typeof done> | undefined;
    void done.then((o) => (outcome = o)).catch(() => undefined);
    while (!outcome && !stop.signal.aborted) await jest.advanceTimersToNextTimerAsync();
    return { outcome: await done, rounds, errors };
  }

  it('runs rounds one after another until aborted, numbering the ones that succeeded', async () => {
    const { outcome, rounds, errors } = await run([10, 20, 30]);
    expect(rounds).toEqual([
      [10, 1],
      [20, 2],
      [30, 3],
    ]);
    expect(errors).toEqual([]);
    expect(outcome).toEqual({ rounds: 3, failures: 0 });
  });

  it('throws when the first round fails: a wrong setting ends the process', async () => {
    await expect(run([new Error('no such database')])).rejects.toThrow('no such database');
  });

  it('reports a later failure and tries again, the pause doubling up to the longest', async () => {
    const down = new Error('connect ECONNREFUSED');
    const { outcome, rounds, errors } = await run([1, down, down, down, down, 2, down, 3], 1000, 5000);
    expect(errors.map(([, pause]) => pause)).toEqual([2000, 4000, 5000, 5000, 2000]);
    expect(errors[0][0]).toBe('connect ECONNREFUSED');
    expect(rounds).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(outcome).toEqual({ rounds: 3, failures: 5 });
  });

  it('pauses the interval between rounds, and no longer once aborted', async () => {
    const stop = new AbortController();
    let calls = 0;
    const done = watch(
      () => Promise.resolve(++calls),
      { intervalMs: 60_000, maxBackoffMs: 60_000 },
      stop.signal,
      { onRound: () => undefined, onError: () => undefined },
    );
    await jest.advanceTimersByTimeAsync(59_999);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    stop.abort();
    await expect(done).resolves.toEqual({ rounds: 2, failures: 0 });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('pauseUnlessAborted resolves at once for an aborted signal and clears its timer on abort', async () => {
    const aborted = new AbortController();
    aborted.abort();
    await pauseUnlessAborted(10_000, aborted.signal);
    const later = new AbortController();
    const paused = pauseUnlessAborted(10_000, later.signal);
    expect(jest.getTimerCount()).toBe(1);
    later.abort();
    await paused;
    expect(jest.getTimerCount()).toBe(0);
  });
});
