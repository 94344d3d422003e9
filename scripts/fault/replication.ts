/**
 * A MariaDB primary with a binary log and a GTID replica of it, each a private server with its
 * own port and data directory (the machine's own server is not touched): for the replica suite.
 */
import { mariadbDialect, positionCovers } from '@app/db';
import { PrivateMariaDb } from './mariadb';

export interface ReplicationPair {
  primary: PrivateMariaDb;
  replica: PrivateMariaDb;
  destroy(): Promise<void>;
}

// userstat: information_schema.TABLE_STATISTICS counts the rows each server read, per table,
// so a test can tell which server answered a report.
const COMMON = ['--userstat=1', '--binlog-format=ROW'];

export async function startReplicationPair(): Promise<ReplicationPair> {
  const primary = await PrivateMariaDb.create([...COMMON, '--server-id=1', '--log-bin=primary-bin']);
  const replica = await PrivateMariaDb.create([...COMMON, '--server-id=2', '--relay-log=replica-relay']);
  const pair = {
    primary,
    replica,
    destroy: async () => {
      await Promise.all([replica.destroy(), primary.destroy()]);
    },
  };
  try {
    await Promise.all([primary.start(), replica.start()]);
    // The primary logs from its first statement on, so the replica starts from an empty position.
    await replica.sql(
      `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='root', ` +
        "MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
      'START SLAVE',
    );
    return pair;
  } catch (error) {
    await pair.destroy();
    throw error;
  }
}

/** Resolves once the replica has applied everything the primary has written, by GTID position. */
export async function waitForReplica(pair: ReplicationPair, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [[p], [r]] = await Promise.all([
      pair.primary.sql<{ pos: string }>(mariadbDialect.replicationPosition('primary')),
      pair.replica.sql<{ pos: string }>(mariadbDialect.replicationPosition('replica')),
    ]);
    const primary = mariadbDialect.parseReplicationPosition(p.pos);
    if (positionCovers(mariadbDialect.parseReplicationPosition(r.pos), primary)) return;
    if (Date.now() > deadline)
      throw new Error(`the replica did not catch up within ${timeoutMs} ms (${r.pos} < ${p.pos})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Rows a server has read from `tables` of `database` since it started (userstat). */
export async function rowsRead(db: PrivateMariaDb, database: string, tables: string[]): Promise<number> {
  const [row] = await db.sql<{ n: string | number | null }>(
    `SELECT SUM(ROWS_READ) AS n FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = '${database}' ` +
      `AND TABLE_NAME IN (${tables.map((t) => `'${t}'`).join(',')})`,
  );
  return Number(row?.n ?? 0);
}
