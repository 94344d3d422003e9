import type { DatabaseLocation } from '@app/config';
import { Connection, createConnection } from 'mysql2/promise';

/**
 * One connection of its own to one server, for health checks: not one of the pool's, which
 * may all be busy under load. Every statement has a short timeout; a failed one drops the
 * connection, and the next call connects again.
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
      const [rows] = await this.connection.query({ sql, timeout: this.timeoutMs });
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
