import { ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { withDates } from './datetimes';
import { EmbeddedEngineUnavailableError, MD5_BYTES } from './embedded-driver';

/**
 * Read-only SELECTs against a SQLite file, each under a time budget, without blocking the event loop.
 *
 * better-sqlite3 is synchronous and exposes no interrupt (no sqlite3_interrupt, no progress handler),
 * and a worker_thread cannot be stopped while it is inside native code. A child process can be
 * killed, so every connection lives in its own child and a statement past its budget costs the pool
 * that child (SIGKILL), which is replaced on the next demand.
 */
export interface SqliteReadPoolOptions {
  /** The SQLite file; it must exist (the children open it read-only, `fileMustExist`). */
  path: string;
  /** At most this many children (one connection each), spawned on demand. */
  size: number;
  /** Applied by every child after it opens the file, e.g. `busy_timeout = 2000` (`PRAGMA ` is optional). */
  pragmas?: string[];
}

export class SqliteTimeBudgetError extends Error {
  override readonly name = 'SqliteTimeBudgetError';
  constructor(readonly budgetMs: number) {
    super(`the SQLite statement exceeded the budget of ${budgetMs} ms and was stopped`);
  }
}

export function isSqliteTimeBudgetError(e: unknown): boolean {
  return e instanceof SqliteTimeBudgetError;
}

/** Our own refusal of a statement that returns no rows (SQLite's codes are all SQLITE_*). */
export const SQLITE_NOT_A_READER = 'ERR_SQLITE_NOT_A_READER';

/**
 * The message shapes on the IPC channel (JSON serialisation, Node's default). Rows cross it as JSON
 * too: a BLOB arrives as `{ type: 'Buffer', data: [...] }` and an INTEGER beyond 2^53 as an
 * imprecise number (better-sqlite3's safeIntegers is off), as in the child itself.
 */
interface StatementMessage {
  id: number;
  sql: string;
  params: (number | string | null)[];
  /** Positions in `params` holding a bigint as its decimal string: JSON has no bigint. */
  bigints: number[];
}
type AnswerMessage =
  | { id: number; rows: Array<Record<string, unknown>>; dates: string[] }
  | { id: number; error: { message: string; code?: string } };

interface Job {
  readonly message: StatementMessage;
  readonly budgetMs: number;
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  settled: boolean;
}

interface Reader {
  readonly child: ChildProcess;
  job: Job | undefined;
  retired: boolean;
}

// Plain JavaScript run with `node -e`: a string survives `nest build` (which copies no .js asset) and
// coverage instrumentation (which would break a function serialised with toString()).
const CHILD_SOURCE = String.raw`
'use strict';
const config = JSON.parse(process.argv[1]);
process.title = 'sqlite-read-pool reader';
const Database = require(config.engine);
// registerSqlFunctions' functions (embedded-driver.ts), which this plain script cannot import:
// a generated column (sessions.attributes_hash) calls them when a statement reads it.
const FUNCTIONS = {
  md5_bytes: (text) => (text === null ? null : require('node:crypto').createHash('md5').update(text, 'utf8').digest()),
};
let db = null;
function open() {
  if (db) return db;
  const opened = new Database(config.path, { readonly: true, fileMustExist: true });
  try {
    for (const name of config.functions) opened.function(name, { deterministic: true }, FUNCTIONS[name]);
    for (const pragma of config.pragmas) opened.pragma(pragma.replace(/^\s*pragma\s+/i, ''));
  } catch (error) {
    opened.close();
    throw error;
  }
  return (db = opened);
}
function answer(message) {
  if (!process.connected) process.exit(0);
  try {
    process.send(message);
  } catch (error) {
    // JSON.stringify of the rows failed (a result too large for one string): say so instead of dying.
    process.send({ id: message.id, error: { message: 'the SQLite answer could not be sent: ' + error.message } });
  }
}
process.on('message', (message) => {
  try {
    const stmt = open().prepare(message.sql);
    if (!stmt.reader) {
      const error = new Error('the SQLite read pool only runs statements that return rows (SELECT, WITH, a reading PRAGMA)');
      error.code = '${SQLITE_NOT_A_READER}';
      throw error;
    }
    const params = message.params.slice();
    for (const i of message.bigints) params[i] = BigInt(params[i]);
    // Columns declared DATETIME come back as Dates in the parent (embedded-driver.ts withDates).
    const dates = stmt.columns().filter((c) => c.type && /^DATETIME/i.test(c.type)).map((c) => c.name);
    answer({ id: message.id, rows: stmt.all(...params), dates });
  } catch (error) {
    const code = error && typeof error.code === 'string' ? error.code : undefined;
    answer({ id: message.id, error: { message: String(error && error.message ? error.message : error), code } });
  }
});
process.on('disconnect', () => process.exit(0));
`;

let engineEntry: string | undefined;

/** Where better-sqlite3 is, once it has been shown to load (native addon included) in this process. */
function resolveEngine(): string {
  if (engineEntry !== undefined) return engineEntry;
  try {
    const entry = require.resolve('better-sqlite3');
    // The addon is only loaded when a database is opened: open one so a missing build fails here,
    // at construction, rather than in every child.
    const Database = createRequire(__filename)(entry) as new (path: string) => { close(): void };
    new Database(':memory:').close();
    engineEntry = entry;
    return entry;
  } catch (cause) {
    throw new EmbeddedEngineUnavailableError(cause);
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

export class SqliteReadPool {
  private readonly engine: string;
  private readonly readers: Reader[] = [];
  private readonly queue: Job[] = [];
  /** Every child not yet seen to exit, including the ones killed and no longer in `readers`. */
  private readonly processes = new Map<ChildProcess, Promise<void>>();
  private nextId = 1;
  private closed = false;
  private exitHookInstalled = false;

  constructor(private readonly options: SqliteReadPoolOptions) {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new RangeError(`SqliteReadPool size must be a positive integer, got ${options.size}`);
    }
    this.engine = resolveEngine();
  }

  /**
   * Runs one statement returning rows. Rejects with SqliteTimeBudgetError when no answer came within
   * `budgetMs` of this call (time queued for a free child included); with an Error carrying SQLite's
   * `code` when SQLite refuses the statement.
   */
  select<Row = Record<string, unknown>>(sql: string, params: unknown[], budgetMs: number): Promise<Row[]> {
    if (this.closed) return Promise.reject(new Error('the SQLite read pool is closed'));
    if (!(budgetMs > 0 && budgetMs <= MAX_TIMER_MS)) {
      return Promise.reject(
        new RangeError(`the SQLite time budget must be 1..${MAX_TIMER_MS} ms, got ${budgetMs}`),
      );
    }
    return new Promise<Row[]>((resolve, reject) => {
      // A parameter that cannot be bound throws here, which rejects the promise.
      const message: StatementMessage = { id: this.nextId++, sql, ...encodeParams(params) };
      const job: Job = {
        message,
        budgetMs,
        resolve: resolve as (rows: unknown[]) => void,
        reject,
        timer: undefined,
        settled: false,
      };
      // Left ref'd: it is what keeps the process alive while a statement runs (the children are unref'd).
      job.timer = setTimeout(() => this.overBudget(job), budgetMs);
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Kills every child and rejects what is queued or running; later selects reject. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      for (const job of this.queue.splice(0)) {
        settle(job, new Error('the SQLite read pool was closed before the statement ran'));
      }
      for (const reader of this.readers.splice(0)) {
        reader.retired = true;
        if (reader.job)
          settle(reader.job, new Error('the SQLite read pool was closed while the statement ran'));
      }
      this.killAll();
      if (this.exitHookInstalled) process.removeListener('exit', this.killAll);
      // Ref'd again until they are reaped: otherwise, with nothing else pending, the process would
      // exit before this promise settles and code awaiting close() would never run.
      for (const child of this.processes.keys()) child.ref();
    }
    await Promise.all(this.processes.values());
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const reader = this.readers.find((r) => r.job === undefined) ?? this.spawnReader();
      if (!reader) return;
      const job = this.queue.shift()!;
      reader.job = job;
      reader.child.send(job.message, (error) => {
        if (error)
          this.retire(
            reader,
            new Error(`could not send the statement to the SQLite child: ${error.message}`),
          );
      });
    }
  }

  private spawnReader(): Reader | undefined {
    if (this.readers.length >= this.options.size) return undefined;
    const config = JSON.stringify({
      engine: this.engine,
      path: this.options.path,
      pragmas: this.options.pragmas ?? [],
      functions: [MD5_BYTES],
    });
    // spawn, not fork: fork would pass on process.execArgv (jest's, ts-node's, --inspect ports).
    const child = spawn(process.execPath, ['-e', CHILD_SOURCE, config], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    const reader: Reader = { child, job: undefined, retired: false };
    this.readers.push(reader);
    this.processes.set(
      child,
      new Promise<void>((resolve) => {
        // 'error' alone when the spawn itself failed: there will be no 'exit'. on, not once: a failed
        // kill emits 'error' too, and a second one without a listener would crash the parent.
        child.on('error', (error) => {
          if (child.pid === undefined) this.processes.delete(child);
          this.retire(reader, new Error(`the SQLite child process failed: ${error.message}`));
          if (child.pid === undefined) resolve();
        });
        child.once('exit', (code, signal) => {
          this.processes.delete(child);
          this.retire(
            reader,
            new Error(
              `the SQLite child process exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}) while running a statement`,
            ),
          );
          resolve();
        });
      }),
    );
    child.on('message', (answer: AnswerMessage) => this.answered(reader, answer));
    // An idle pool must not hold the process open; a running statement's budget timer does.
    child.unref();
    child.channel?.unref();
    if (!this.exitHookInstalled) {
      process.on('exit', this.killAll);
      this.exitHookInstalled = true;
    }
    return reader;
  }

  private answered(reader: Reader, answer: AnswerMessage): void {
    const job = reader.job;
    if (reader.retired || !job || job.message.id !== answer.id) return;
    reader.job = undefined;
    if ('rows' in answer) {
      job.settled = true;
      clearTimeout(job.timer);
      job.resolve(answer.dates.length ? answer.rows.map((row) => withDates(row, answer.dates)) : answer.rows);
    } else {
      const error = new Error(answer.error.message) as Error & { code?: string };
      if (answer.error.code !== undefined) error.code = answer.error.code;
      settle(job, error);
    }
    this.dispatch();
  }

  private overBudget(job: Job): void {
    if (job.settled) return;
    const queued = this.queue.indexOf(job);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      settle(job, new SqliteTimeBudgetError(job.budgetMs));
      return;
    }
    const reader = this.readers.find((r) => r.job === job);
    settle(job, new SqliteTimeBudgetError(job.budgetMs));
    if (reader) {
      // No interrupt exists: the only way to stop the statement is to stop the process.
      reader.child.kill('SIGKILL');
      this.retire(reader, undefined);
    }
  }

  /** Takes a child out of the pool, failing its statement if it had one, and serves the queue. */
  private retire(reader: Reader, error: Error | undefined): void {
    if (reader.retired) return;
    reader.retired = true;
    const index = this.readers.indexOf(reader);
    if (index >= 0) this.readers.splice(index, 1);
    if (reader.job && error) settle(reader.job, error);
    reader.job = undefined;
    if (reader.child.exitCode === null && reader.child.signalCode === null) reader.child.kill('SIGKILL');
    this.dispatch();
  }

  /** Synchronous, so it also works from process.on('exit'): a runaway statement must not outlive us. */
  private readonly killAll = (): void => {
    for (const child of this.processes.keys()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  };
}

function settle(job: Job, error: Error): void {
  if (job.settled) return;
  job.settled = true;
  clearTimeout(job.timer);
  job.reject(error);
}

/**
 * Dates become SQLite's stored UTC text, booleans 1/0. A bigint crosses the JSON IPC channel as its
 * decimal string and is turned back into a BigInt in the child, so SQLite binds an INTEGER, not TEXT
 * (TEXT would compare greater than every number in an expression without affinity, such as count(*)).
 */
function encodeParams(params: unknown[]): Pick<StatementMessage, 'params' | 'bigints'> {
  const encoded: StatementMessage['params'] = [];
  const bigints: number[] = [];
  params.forEach((value, i) => {
    if (value === null || typeof value === 'string') encoded.push(value);
    else if (typeof value === 'number') {
      // JSON would turn NaN and ±Infinity into null without a word.
      if (!Number.isFinite(value))
        throw new TypeError(`SQLite parameter ${i + 1} is not a finite number: ${value}`);
      encoded.push(value);
    } else if (typeof value === 'boolean') encoded.push(value ? 1 : 0);
    else if (typeof value === 'bigint') {
      encoded.push(value.toString());
      bigints.push(i);
    } else if (value instanceof Date) encoded.push(sqliteDateTime(value, i));
    else {
      const kind =
        value === undefined
          ? 'undefined'
          : typeof value === 'object'
            ? value.constructor?.name
            : typeof value;
      throw new TypeError(
        `SQLite parameter ${i + 1} has an unsupported type (${kind ?? 'object'}); only numbers, strings, bigints, booleans, Dates and null are accepted`,
      );
    }
  });
  return { params: encoded, bigints };
}

function sqliteDateTime(date: Date, i: number): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) {
    throw new TypeError(`SQLite parameter ${i + 1} is an invalid Date or one outside years 0000-9999`);
  }
  // Year 0000-9999, so toISOString is always YYYY-MM-DDTHH:MM:SS.SSSZ.
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}
