import type { DatabaseLocation } from '@app/config';
import { Connection, createConnection } from 'mysql2/promise';

/**
 * One connection of its own to one server, for health checks: not one of the pool's, which
 * may all be busy under load. Every statement has a short timeout; a failed one drops the
 * connection, and the next call connects again.
 *
 * The timeout is the server's, not the process's: a request that holds the event loop longer
 * than it (a large answer serialized, a CPU profile) does not make a server that answered in
 * time look down, which would answer the next requests 503 until the next check (withinTimeout).
 */
export class ServerProbe {
  private connection: Connection | undefined;

  constructor(
    private readonly location: DatabaseLocation,
    private readonly timeoutMs: number,
  ) {}

  async query<Row>(sql: string): Promise<Row[]> {
    if (!this.connection) {
      const connection = await createConnection({
        host: this.location.host,
        port: this.location.port,
        user: this.location.user,
        password: this.location.password,
        database: this.location.database,
        connectTimeout: this.timeoutMs,
      });
      // The server may close an idle connection; without a listener that error would crash the process.
      connection.on('error', () => {
        if (this.connection === connection) this.close();
      });
      this.connection = connection;
    }
    try {
      const [rows] = await withinTimeout(this.connection.query(sql), this.timeoutMs);
      return rows as Row[];
    } catch (error) {
      this.close();
      throw error;
    }
  }

  close(): void {
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    const raw = (connection as unknown as { connection?: { stream?: { destroy(): void } } }).connection;
    connection.destroy();
    // destroy() only half-closes the socket; a server that stopped answering never finishes it.
    raw?.stream?.destroy();
  }
}

/** Where a server listens, without credentials: for logs, metrics and health answers. */
export function serverName(location: DatabaseLocation): string {
  return `${location.host}:${location.port}`;
}

/** The error of a statement the server did not answer in time (a connection-level failure). */
export class ProbeTimeoutError extends Error {
  readonly code = 'PROTOCOL_SEQUENCE_TIMEOUT';

  constructor(timeoutMs: number) {
    super(`the server did not answer within ${timeoutMs} ms`);
  }
}

/**
 * `work`, or a ProbeTimeoutError once `timeoutMs` have passed without its answer. A timer that
 * fires late (the event loop was held) runs before the I/O that arrived meanwhile is read: the
 * verdict waits for that read (setImmediate runs after the poll phase), so only an answer that
 * has not arrived counts as late. The caller drops the connection of a late answer.
 */
export function withinTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(
      () => setImmediate(() => settle(() => reject(new ProbeTimeoutError(timeoutMs)))),
      timeoutMs,
    );
    work.then(
      (value) => settle(() => resolve(value)),
      (error: Error) => settle(() => reject(error)),
    );
  });
}
