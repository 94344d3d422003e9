import { DatabaseConnector } from '@app/db';
import { SessionAggregator } from '@app/ingest';
import { Command, CommandRunner } from 'nest-commander';
import { Output } from '../output';
import { progressBar } from './progress';

@Command({
  name: 'aggregate',
  description: 'Bring the derived tables (sessions, visitors) up to date with every imported hit; idempotent',
})
export class AggregateCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly aggregator: SessionAggregator,
    private readonly out: Output,
  ) {
    super();
  }

  async run(): Promise<void> {
    await this.db.connect();
    const onSigint = () => this.aggregator.requestStop();
    process.on('SIGINT', onSigint);
    try {
      const pending = await this.aggregator.pending();
      const bar =
        pending > 0 ? progressBar('aggregate [{bar}] {percentage}% | {value}/{total} sessions') : undefined;
      bar?.start(pending, 0);
      const summary = await this.aggregator.run((done) => bar?.update(Math.min(done, pending)));
      bar?.stop();
      this.out.result(
        {
          sessions: summary.sessions,
          visitors: summary.visitors,
          chunks: summary.chunks,
          remaining: summary.remaining,
          sketch_hours: summary.sketchHours,
          sketch_seconds: Number(summary.sketchSeconds.toFixed(3)),
          goal_sites: summary.goalSites,
          seconds: Number(summary.seconds.toFixed(3)),
        },
        `aggregated ${summary.sessions} sessions (${summary.visitors} visitors), ${summary.sketchHours} visitor-sketch hours, ${summary.goalSites} sites' goals rolled up, in ${summary.seconds.toFixed(1)} s` +
          (summary.remaining ? `; ${summary.remaining} still queued` : ''),
      );
    } finally {
      process.off('SIGINT', onSigint);
      await this.db.close();
    }
  }
}
