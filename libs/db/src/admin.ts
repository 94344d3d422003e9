import type { DatabaseLocation } from '@app/config';
import { Connection, createConnection } from 'mysql2/promise';
import { dialectForServerVersion } from './dialect';

/** Runs `work` on a connection to the server, without selecting a database. */
async function onServer(
  location: DatabaseLocation,
  work: (conn: Connection) => Promise<unknown>,
): Promise<void> {
  const conn = await createConnection({
    host: location.host,
    port: location.port,
    user: location.user,
    password: location.password,
    connectTimeout: 5000,
  });
  try {
    await work(conn);
  } finally {
    await conn.end();
  }
}

const quoted = (name: string) => `\`${name.replace(/`/g, '')}\``;

/**
 * Creates the database when it does not exist yet (used by `migrate` and the test setup), with
 * the server's exact (binary, NO PAD) collation as its default.
 */
export function ensureDatabase(location: DatabaseLocation): Promise<void> {
  return onServer(location, async (conn) => {
    const [rows] = await conn.query('SELECT VERSION() AS v');
    const collation = dialectForServerVersion((rows as Array<{ v: string }>)[0].v).exactCollation;
    await conn.query(
      `CREATE DATABASE IF NOT EXISTS ${quoted(location.database)} CHARACTER SET utf8mb4 COLLATE ${collation}`,
    );
  });
}

export function dropDatabase(location: DatabaseLocation): Promise<void> {
  return onServer(location, (conn) => conn.query(`DROP DATABASE IF EXISTS ${quoted(location.database)}`));
}
