/**
 * `npm run fault`: database faults against the built API and a private MariaDB (installed in
 * a temporary directory, on a free port), with the figures printed as JSON and written to
 * bench/results-fault-<time>.json: boot without a database, a clean restart, a crash and a
 * frozen server, each under traffic.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bootWithoutDatabase, outageUnderTraffic, prepareFaultBed } from './db-faults';

async function main(): Promise<void> {
  const bed = await prepareFaultBed();
  const report: Record<string, unknown> = { started_at: new Date().toISOString() };
  try {
    const boot = await bootWithoutDatabase(bed);
    report.boot_without_database = boot.result;
    try {
      report.restart = await outageUnderTraffic(boot.api, bed, 'stop', { concurrency: 8 });
      report.crash = await outageUnderTraffic(boot.api, bed, 'crash', { concurrency: 8 });
      report.freeze = await outageUnderTraffic(boot.api, bed, 'freeze', { concurrency: 8, outageMs: 5000 });
      report.api_log_lines_about_the_database = boot.api.stdout.filter((l) =>
        l.includes('"context":"Database"'),
      );
    } finally {
      await boot.api.stop();
    }
  } finally {
    await bed.db.destroy();
  }
  const out = JSON.stringify(report, null, 2);
  process.stdout.write(`${out}\n`);
  const dir = path.join(__dirname, '../../bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `results-fault-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, out);
  process.stderr.write(`written to ${path.relative(process.cwd(), file)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
