import { DatabaseConnector } from '@app/db';
import { AggregateSummary, SessionAggregator } from '@app/ingest';
import { Command, CommandRunner, Option } from 'nest-commander';
import { CliError, Output } from '../output';
import { positiveInt } from './parsers';
import { progressBar } from './progress';
import { watch } from './watch';

interface AggregateOptions {
  watch?: boolean;
  interval?: number;
}

/** Seconds between two rounds of `aggregate --watch` unless `--interval` says otherwise. */
const WATCH_INTERVAL_SECONDS = 5;
/** The longest `--interval`: a day (a timer cannot wait more than ~24.8 days). */
const WATCH_INTERVAL_MAX_SECONDS = 86_400;
/** Longest pause between two tries of `aggregate --watch` while the database fails. */
const WATCH_MAX_BACKOFF_MS = 60_000;

/** What `aggregate` prints of a run (one run, or one round of `--watch`). */
function figures(summary: AggregateSummary) {
  return {
    sessions: summary.sessions,
    visitors: summary.visitors,
    chunks: summary.chunks,
    remaining: summary.remaining,
    sketch_hours: summary.sketchHours,
    sketch_seconds: Number(summary.sketchSeconds.toFixed(3)),
    goal_sites: summary.goalSites,
    seconds: Number(summary.seconds.toFixed(3)),
  };
}

/** The same in a sentence, for the human output. */
function sentence(summary: AggregateSummary): string {
  return (
    `aggregated ${summary.sessions} sessions (${summary.visitors} visitors), ${summary.sketchHours} visitor-sketch hours, ${summary.goalSites} sites' goals rolled up, in ${summary.seconds.toFixed(1)} s` +
    (summary.remaining ? `; ${summary.remaining} still queued` : '')
  );
}

@Command({
  name: 'aggregate',
  description:
    'Bring the derived tables (sessions, visitors) up to date with every imported hit; idempotent. ' +
    'With --watch, keep doing so every few seconds until stopped (SIGTERM or Ctrl-C)',
})
export class AggregateCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly aggregator: SessionAggregator,
    private readonly out: Output,
  ) {
    super();
  }

  async run(_params: string[], options: AggregateOptions = {}): Promise<void> {
    if (options.interval !== undefined && !options.watch) throw new CliError('--interval needs --watch');
    await this.db.connect();
    const stop = new AbortController();
    const onSignal = () => {
      this.aggregator.requestStop();
      stop.abort();
    };
    const signals: NodeJS.Signals[] = options.watch ? ['SIGINT', 'SIGTERM'] : ['SIGINT'];
    for (const s of signals) process.on(s, onSignal);
    try {
      if (options.watch) await this.watch(options.interval ?? WATCH_INTERVAL_SECONDS, stop.signal);
      else await this.once();
    } finally {
      for (const s of signals) process.off(s, onSignal);
      await this.db.close();
    }
  }

  private async once(): Promise<void> {
    const pending = await this.aggregator.pending();
    const bar =
      pending > 0 ? progressBar('aggregate [{bar}] {percentage}% | {value}/{total} sessions') : undefined;
    bar?.start(pending, 0);
    const summary = await this.aggregator.run((done) => bar?.update(Math.min(done, pending)));
    bar?.stop();
    this.out.result(figures(summary), sentence(summary));
  }

  /**
   * Rounds of `aggregate` until stopped, `intervalSeconds` apart: one process instead of one
   * per minute from cron, so a hit's session is derived within about that interval plus the
   * round's own time. Prints a line for each round that changed something (JSON Lines with
   * --json), and one when it stops.
   */
  private async watch(intervalSeconds: number, signal: AbortSignal): Promise<void> {
    let sessions = 0;
    const outcome = await watch(
      () => this.aggregator.run(),
      { intervalMs: intervalSeconds * 1000, maxBackoffMs: WATCH_MAX_BACKOFF_MS },
      signal,
      {
        onRound: (summary, round) => {
          sessions += summary.sessions;
          if (summary.sessions + summary.sketchHours + summary.goalSites + summary.remaining === 0) return;
          this.out.result({ round, ...figures(summary) }, `round ${round}: ${sentence(summary)}`);
        },
        onError: (error, retryInMs) => {
          const message = error instanceof Error ? error.message : String(error);
          this.out.info(`aggregate failed: ${message}; trying again in ${Math.round(retryInMs / 1000)} s`);
        },
      },
    );
    this.out.result(
      { stopped: true, rounds: outcome.rounds, failed_rounds: outcome.failures, sessions },
      `stopped after ${outcome.rounds} rounds (${sessions} sessions aggregated, ${outcome.failures} rounds failed)`,
    );
  }

  @Option({
    flags: '--watch',
    description:
      'keep running: a round every --interval seconds until SIGTERM or Ctrl-C; a line for each round that ' +
      'changed something (JSON Lines with --json) and one when it stops; a failed round is tried again, ' +
      'up to a minute apart',
  })
  parseWatch(): boolean {
    return true;
  }

  @Option({
    flags: '--interval <seconds>',
    description: `with --watch, seconds between two rounds, 1 to ${WATCH_INTERVAL_MAX_SECONDS} (default ${WATCH_INTERVAL_SECONDS})`,
  })
  parseInterval(v: string): number {
    const seconds = positiveInt('--interval')(v);
    if (seconds > WATCH_INTERVAL_MAX_SECONDS)
      throw new CliError(`--interval must be at most ${WATCH_INTERVAL_MAX_SECONDS} seconds, got ${v}`);
    return seconds;
  }
}
