import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { OpenApiContract, RecordedResponse } from './openapi-contract';

/**
 * The responses recorded since the last look (test/support/response-recorder.js writes them
 * to $RESPONSE_RECORD_DIR, one file per process), for the suite running now: the files'
 * sizes at the suite's start are where it begins.
 */
class RecordedResponses {
  private readonly offsets = new Map<string, number>();

  constructor(readonly dir: string | undefined) {
    for (const file of this.files()) this.offsets.set(file, statSync(file).size);
  }

  private files(): string[] {
    if (!this.dir || !existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((name) => name.endsWith('.jsonl'))
      .map((name) => path.join(this.dir!, name));
  }

  /** Every response recorded since the previous call (complete lines only). */
  take(): RecordedResponse[] {
    const records: RecordedResponse[] = [];
    for (const file of this.files()) {
      const from = this.offsets.get(file) ?? 0;
      const text = readFileSync(file).subarray(from).toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      this.offsets.set(file, from + Buffer.byteLength(text.slice(0, end)));
      for (const line of text.slice(0, end).split('\n'))
        if (line) records.push(JSON.parse(line) as RecordedResponse);
    }
    return records;
  }
}

let contract: OpenApiContract | undefined;
let recorded: RecordedResponses | undefined;

/** Starts a suite's window on the recorded responses (contract-setup.ts). */
export function startRecording(dir: string | undefined): void {
  recorded = new RecordedResponses(dir);
}

export function openApiContract(): OpenApiContract {
  return (contract ??= OpenApiContract.fromFile());
}

/** The problems of every response recorded since the last check; the caller fails on any. */
export function checkRecordedResponses(): { checked: number; problems: string[] } {
  const records = recorded?.take() ?? [];
  const problems = records.flatMap((r) => openApiContract().check(r));
  return { checked: records.filter((r) => openApiContract().covers(r.url)).length, problems };
}

/**
 * Runs `action` and returns what the contract check says about the responses it caused,
 * taking them out of the after-each check: for tests that show the check catches a
 * response the document does not allow.
 */
export async function contractProblemsOf(action: () => Promise<unknown>): Promise<string[]> {
  checkOrThrow();
  await action();
  return checkRecordedResponses().problems;
}

export function checkOrThrow(): void {
  const { problems } = checkRecordedResponses();
  if (problems.length === 0) return;
  const shown = problems.slice(0, 20);
  throw new Error(
    `${problems.length} response(s) do not match openapi.json:\n  ${shown.join('\n  ')}` +
      (problems.length > shown.length ? `\n  … and ${problems.length - shown.length} more` : ''),
  );
}
