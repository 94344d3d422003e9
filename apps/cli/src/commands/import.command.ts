import { DatabaseConnector } from '@app/db';
import { HitImporter, ImportSource, SessionAggregator } from '@app/ingest';
import { createReadStream, statSync } from 'node:fs';
import { Command, CommandRunner, Option } from 'nest-commander';
import { CliError, Output } from '../output';
import { progressBar } from './progress';

/** Bytes per read of an import file. */
const IMPORT_READ_BYTES = 16 * 1024;

export const EXIT_REJECTED_LINES = 2;

@Command({
  name: 'import',
  arguments: '<files...>',
  description:
    'Load NDJSON hits from files (- for stdin). Idempotent on hit id; a bad line is reported as "line N: reason" ' +
    'and skipped, as is a line the database refuses (only that line, never its batch); exit code 2 when any line was rejected. Each batch is all-or-nothing.',
})
export class ImportCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly importer: HitImporter,
    private readonly aggregator: SessionAggregator,
    private readonly out: Output,
  ) {
    super();
  }

  async run(files: string[], options: { aggregate?: boolean }): Promise<void> {
    const sources: ImportSource[] = files.map((file) => {
      if (file === '-') return { name: 'stdin', stream: process.stdin };
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        throw new CliError(`cannot read ${file}`);
      }
      // Small reads: a chunk's lines are parsed in one go on the thread that also answers the
      // database, so a large chunk keeps the writers' next statements waiting (at 1M hits with
      // two writers, 256 KB chunks took 35.9 s, 64 KB 32.8 s, 16 KB 30.6 s).
      return { name: file, stream: createReadStream(file, { highWaterMark: IMPORT_READ_BYTES }), size };
    });
    const total = sources.reduce((n, s) => n + (s.size ?? 0), 0);
    const known = sources.every((s) => s.size !== undefined);

    await this.db.connect();
    const bar =
      known && total > 0
        ? progressBar('import [{bar}] {percentage}% | {value}/{total} bytes | ETA {eta}s')
        : undefined;
    bar?.start(total, 0);
    let interrupts = 0;
    const onSigint = () => {
      interrupts++;
      if (interrupts > 1) process.exit(130);
      this.out.info('\nstopping after the batch in flight (Ctrl-C again to abort it; it then rolls back)');
      this.importer.requestStop();
    };
    process.on('SIGINT', onSigint);
    try {
      const summary = await this.importer.import(sources, {
        onBytes: (n) => bar?.increment(n),
        onReject: (r) =>
          this.out.info(`${sources.length > 1 ? `${r.source}: ` : ''}line ${r.line}: ${r.reason}`),
      });
      bar?.stop();
      let aggregated: number | undefined;
      if (options.aggregate && !summary.interrupted) aggregated = (await this.aggregator.run()).sessions;
      const rate = summary.seconds > 0 ? Math.round(summary.lines / summary.seconds) : summary.lines;
      this.out.result(
        {
          lines: summary.lines,
          imported: summary.imported,
          duplicates: summary.duplicates,
          rejected: summary.rejected,
          orders: summary.orders,
          interrupted: summary.interrupted,
          seconds: Number(summary.seconds.toFixed(3)),
          lines_per_second: rate,
          ...(aggregated !== undefined ? { sessions_aggregated: aggregated } : {}),
        },
        `${summary.lines} lines: ${summary.imported} imported, ${summary.duplicates} already known, ` +
          `${summary.rejected} rejected, ${summary.orders} new orders in ${summary.seconds.toFixed(1)} s (${rate} lines/s)` +
          (summary.interrupted ? ' — interrupted; run the same import again to complete it' : '') +
          (aggregated !== undefined
            ? `; ${aggregated} sessions aggregated`
            : '; run `aggregate` to update the reports'),
      );
      if (summary.interrupted) process.exitCode = 130;
      else if (summary.rejected > 0) process.exitCode = EXIT_REJECTED_LINES;
    } finally {
      bar?.stop();
      process.off('SIGINT', onSigint);
      await this.db.close();
    }
  }

  @Option({ flags: '--aggregate', description: 'run `aggregate` after the import' })
  parseAggregate() {
    return true;
  }
}
