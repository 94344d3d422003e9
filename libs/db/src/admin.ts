import type { DatabaseLocation } from '@app/config';
import { createConnection } from 'mysql2/promise';

/** Creates the database when it does not exist yet (used by `migrate` and the test setup). */
export async function ensureDatabase(location: DatabaseLocation): Promise<void> {
  const conn = await createConnection({
    host: location.host,
    port: location.port,
    user: location.user,
    password: location.password,
    connectTimeout: 5000,
  });
  try {
    await conn.query(
      `CREATE DATABASE IF NOT EXISTS \`${location.database.replace(/`/g, '')}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    );
  } finally {
    await conn.end();
  }
}

export async function dropDatabase(location: DatabaseLocation): Promise<void> {
  const conn = await createConnection({
    host: location.host,
    port: location.port,
    user: location.user,
    password: location.password,
    connectTimeout: 5000,
  });
  try {
    await conn.query(`DROP DATABASE IF EXISTS \`${location.database.replace(/`/g, '')}\``);
  } finally {
    await conn.end();
  }
}
