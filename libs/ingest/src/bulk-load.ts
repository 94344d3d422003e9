import { hasServerErrno } from '@app/db';
import { Readable } from 'node:stream';
import { EntityManager } from 'typeorm';

/**
 * `LOAD DATA LOCAL INFILE` of rows the client sends with the statement: on the MySQL family the
 * cheapest way to store many rows. At 1M hits it took the server 16.4 s of CPU against 21.2 s for
 * the same rows as multi-row INSERTs (BENCHMARKS.md run AI): no SQL literal to parse per value.
 *
 * It differs from INSERT in two ways the caller must mind:
 * - LOCAL makes the server skip or adjust a row it would refuse (a duplicate key, a value too
 *   long) and say so in a warning only: `loadRows` returns how many rows it stored and how many
 *   warnings it gave. A load the caller cannot accept is thrown as BulkLoadWarnings, for it to
 *   roll its transaction back and store the rows with INSERT, which refuses instead.
 * - A server may not accept LOCAL at all (`local_infile=OFF`): BulkLoadUnavailable.
 */
export class BulkLoadWarnings extends Error {}
export class BulkLoadUnavailable extends Error {}

/**
 * The server's refusals of LOAD DATA LOCAL: MariaDB's ER_LOAD_INFILE_CAPABILITY_DISABLED (4166,
 * `local_infile=OFF` on 10.11) and ER_NOT_ALLOWED_COMMAND (1148, older servers), MySQL 8's
 * 3948 and 3950.
 */
const LOCAL_REFUSED_ERRNOS = [4166, 1148, 3948, 3950];

/** What LOAD DATA's default FIELDS ESCAPED BY '\\' must see escaped in a field. */
const SPECIALS = /[\\\t\n\r\0]/g;
const ESCAPED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/** Whether `text` holds a character LOAD DATA must see escaped: a loop, faster than a RegExp on short text. */
function needsEscape(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 || c === 9 || c === 10 || c === 13 || c === 0) return true;
  }
  return false;
}

/**
 * One field of a LOAD DATA line: `\N` for NULL, a Date as the UTC DATETIME(3) text (the
 * connection's time zone is UTC, as for INSERT), anything else as its text with LOAD DATA's
 * escapes, so that every character arrives as sent.
 */
export function loadField(value: LoadValue): string {
  if (typeof value === 'string')
    return needsEscape(value) ? value.replace(SPECIALS, (c) => ESCAPED[c]) : value;
  if (typeof value === 'number') return String(value);
  if (value === null || value === undefined) return '\\N';
  return value.toISOString().slice(0, 23).replace('T', ' ');
}

/** What a field of a row may hold. */
export type LoadValue = string | number | Date | null | undefined;

/** The rows as LOAD DATA's lines: tab-separated fields, one line each. */
export function loadText(rows: readonly (readonly LoadValue[])[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) text += i === 0 ? loadField(row[i]) : '\t' + loadField(row[i]);
    text += '\n';
  }
  return text;
}

interface Mysql2Connection {
  query(
    options: { sql: string; infileStreamFactory: () => Readable },
    callback: (error: Error | null, result: { affectedRows: number; warningStatus: number }) => void,
  ): void;
}

/** What one LOAD DATA did. */
export interface LoadOutcome {
  /** Rows stored: every row sent but those the server skipped. */
  stored: number;
  /** Warnings the server gave: one for each row it skipped or adjusted. */
  warnings: number;
  /**
   * LAST_INSERT_ID(): the auto-increment value of the first row stored; `undefined` when none
   * was (the connection's LAST_INSERT_ID() is then an earlier statement's).
   */
  first: number | undefined;
}

/** The BulkLoadWarnings for a load of `sent` rows into `table` whose outcome the caller does not accept. */
export function loadNotAccepted(table: string, sent: number, outcome: LoadOutcome): BulkLoadWarnings {
  return new BulkLoadWarnings(
    `LOAD DATA stored ${outcome.stored} of ${sent} rows into ${table} with ${outcome.warnings} warning(s)`,
  );
}

/**
 * Stores `rows` (values in the order of `columns`) into `table` with one LOAD DATA LOCAL, on the
 * connection of `em`'s transaction. The caller decides whether the outcome is what it wanted.
 */
export async function loadRows(
  em: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly LoadValue[])[],
): Promise<LoadOutcome> {
  const connection = (em.queryRunner as unknown as { databaseConnection?: Mysql2Connection } | undefined)
    ?.databaseConnection;
  if (!connection) throw new Error('loadRows needs the connection of a transaction');
  const data = Buffer.from(loadText(rows));
  const statement = `LOAD DATA LOCAL INFILE 'rows' INTO TABLE ${table} CHARACTER SET utf8mb4 (${columns.join(',')})`;
  const result = await new Promise<{ affectedRows: number; warningStatus: number }>((resolve, reject) =>
    connection.query({ sql: statement, infileStreamFactory: () => Readable.from([data]) }, (error, r) =>
      error ? reject(error) : resolve(r),
    ),
  ).catch((error: unknown) => {
    if (hasServerErrno(error, LOCAL_REFUSED_ERRNOS)) {
      throw new BulkLoadUnavailable(`the server refuses LOAD DATA LOCAL: ${(error as Error).message}`);
    }
    throw error;
  });
  const outcome: LoadOutcome = {
    stored: result.affectedRows,
    warnings: result.warningStatus,
    first: undefined,
  };
  if (outcome.stored > 0) {
    const [row]: Array<{ id: number | string }> = await em.query('SELECT LAST_INSERT_ID() AS id');
    outcome.first = Number(row.id);
  }
  return outcome;
}
