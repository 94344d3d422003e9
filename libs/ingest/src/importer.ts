import { bumpDataVersions, isRefusedRowError, refusalReason, Sql } from '@app/db';
import { pruneLiveHits } from '@app/stats/rollups/live-hits';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { Hit, SiteFacts } from './hit';
import { HitRejection, parseHitLine } from './hit-parser';
import { KeyedWrites } from './keyed-writes';
import { BulkLoadWarnings } from './bulk-load';
import { HitStorage, seqBlocksOf, writeHitBatch } from './hit-writer';
import { readLineChunks } from './line-reader';
import { withDeadlockRetry } from './retry';

export const IMPORT_BATCH_SIZE = 1000;
/**
 * Batches written at once on the MySQL family (one on SQLite, a single writer). At 1M hits on
 * two cores with LOAD DATA (BENCHMARKS.md run AI): 44.7k hits/s with two, 46.6–47.0k with three,
 * 47.0k with four: each batch's LOAD holds the table's AUTO-INC lock, so more wait on it.
 */
export const IMPORT_WRITERS = 3;
const MAX_LINE_BYTES = 1024 * 1024;

export interface ImportSource {
  /** Shown in rejection messages when several sources are imported. */
  name: string;
  stream: Readable;
  /** Total bytes when known (a file), for progress. */
  size?: number;
}

export interface ImportRejection {
  source: string;
  line: number;
  reason: string;
}

export interface ImportSummary {
  lines: number;
  imported: number;
  duplicates: number;
  rejected: number;
  orders: number;
  batches: number;
  interrupted: boolean;
  seconds: number;
}

export interface ImportListener {
  onReject?(rejection: ImportRejection): void;
  onBytes?(bytes: number): void;
}

/** A parsed line, with where it came from for a rejection message. */
interface PendingHit {
  hit: Hit;
  source: string;
  line: number;
}

/** The hit ids and order ids of a batch's lines, by site: the keys two batches written at once must not share. */
function batchKeys(pending: readonly PendingHit[]): Set<string> {
  const keys = new Set<string>();
  for (const { hit } of pending) {
    keys.add(`${hit.siteId}\u0000h${hit.id}`);
    if (hit.orderId !== null) keys.add(`${hit.siteId}\u0000o${hit.orderId}`);
  }
  return keys;
}

/**
 * Streams NDJSON hits into the database in bounded memory. Each batch of valid lines is one
 * transaction, so an interrupted import leaves every line fully stored or not at all, and
 * re-running it completes the rest without duplicates (hits are idempotent on their id).
 *
 * When the database refuses a line the parser accepted (a constraint, a value it cannot
 * store), the batch is split in halves, each written in a transaction of its own, down to the
 * refused line, which alone is rejected with the database's reason: about 2·log2(batch)
 * extra transactions per refused line, and never a valid line lost.
 */
@Injectable()
export class HitImporter {
  private stopRequested = false;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly sql: Sql,
  ) {}

  /** Asks a running import to stop after the batch in flight (Ctrl-C). */
  requestStop(): void {
    this.stopRequested = true;
  }

  async import(
    sources: ImportSource[],
    listener: ImportListener = {},
    batchSize = IMPORT_BATCH_SIZE,
  ): Promise<ImportSummary> {
    const started = process.hrtime.bigint();
    this.stopRequested = false;
    const sites = await this.siteDirectory();
    const blocks = await seqBlocksOf(this.ds.manager, this.sql.dialect);
    // The hits realtime no longer reads go before this import adds its own: in a transaction of
    // the writers' isolation, so that on the MySQL family the scan locks only the rows it deletes
    // (none a batch writes) and never a gap a concurrent import's batch inserts into.
    const now = new Date();
    await withDeadlockRetry(() =>
      this.ds.transaction(this.sql.dialect.writeIsolation, (em) => pruneLiveHits(em, now)),
    );
    const summary: ImportSummary = {
      lines: 0,
      imported: 0,
      duplicates: 0,
      rejected: 0,
      orders: 0,
      batches: 0,
      interrupted: false,
      seconds: 0,
    };
    let batch: PendingHit[] = [];
    const storage: HitStorage = { load: this.sql.dialect.name !== 'sqlite' };
    const writeOnce = (hits: Hit[], load: boolean) =>
      withDeadlockRetry(() =>
        this.ds.transaction(this.sql.dialect.writeIsolation, (em) =>
          writeHitBatch(em, this.sql.dialect, hits, new Date(), blocks, load ? storage : undefined),
        ),
      );
    const write = async (pending: PendingHit[]): Promise<void> => {
      try {
        const hits = pending.map((p) => p.hit);
        // A batch the bulk load did not store exactly is rolled back and INSERTed, which refuses
        // the line the load would have adjusted (and the halving below finds it).
        const result = await writeOnce(hits, true).catch((e: unknown) => {
          if (e instanceof BulkLoadWarnings) return writeOnce(hits, false);
          throw e;
        });
        // After the commit, never inside it: a cache entry under the new version is then always
        // computed from committed data, and the batch takes no lock that the aggregator also needs.
        await bumpDataVersions(this.ds.manager, this.sql.dialect, result.sites);
        summary.imported += result.inserted;
        summary.duplicates += result.duplicates;
        summary.orders += result.orders;
      } catch (e) {
        if (!isRefusedRowError(e)) throw e;
        if (pending.length === 1) {
          summary.rejected++;
          const { source, line } = pending[0];
          listener.onReject?.({ source, line, reason: `the database refused the line: ${refusalReason(e)}` });
          return;
        }
        const half = Math.ceil(pending.length / 2);
        await write(pending.slice(0, half));
        await write(pending.slice(half));
      }
    };
    // Batches are written while the next ones are read and parsed, up to `writers` at once, each
    // a transaction on a connection of its own, so that the database works on both cores. A
    // batch waits for the running batches that share a hit id or an order id with it (whichever
    // line comes first in the file still wins); the rollups they add to are sums, so batches with
    // no key in common may commit in any order. A line the database refuses can therefore be
    // reported after the parse rejections of later batches.
    const writes = new KeyedWrites(this.sql.dialect.writers > 1 ? IMPORT_WRITERS : 1);
    const flush = async () => {
      if (batch.length === 0) return;
      const pending = batch;
      batch = [];
      await writes.submit(batchKeys(pending), async () => {
        await write(pending);
        summary.batches++;
      });
    };

    outer: for (const source of sources) {
      const chunks = readLineChunks(source.stream, MAX_LINE_BYTES, (n) => listener.onBytes?.(n));
      for await (const lines of chunks) {
        for (const line of lines) {
          if (line.text.trim() === '' && !line.tooLong) continue;
          summary.lines++;
          try {
            if (line.tooLong) throw new HitRejection(`line longer than ${MAX_LINE_BYTES} bytes`);
            batch.push({
              hit: parseHitLine(line.text, (id) => sites.get(id)),
              source: source.name,
              line: line.number,
            });
          } catch (e) {
            if (!(e instanceof HitRejection)) throw e;
            summary.rejected++;
            listener.onReject?.({ source: source.name, line: line.number, reason: e.message });
          }
          if (batch.length >= batchSize) {
            await flush();
            if (this.stopRequested) {
              summary.interrupted = true;
              source.stream.destroy();
              break outer;
            }
          }
        }
      }
    }
    if (!summary.interrupted) await flush();
    await writes.drain();
    summary.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return summary;
  }

  private async siteDirectory(): Promise<Map<number, SiteFacts>> {
    const rows: Array<{ id: number; currency: string }> = await this.ds.query(
      'SELECT id, currency FROM sites',
    );
    return new Map(rows.map((r) => [Number(r.id), { id: Number(r.id), currency: r.currency }]));
  }
}
