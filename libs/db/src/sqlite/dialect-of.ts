import type { DataSource } from 'typeorm';
import { dialectForServerVersion, SqlDialect } from '../dialect';
import { sqliteDialect } from './sqlite-dialect';

/** The SQL dialect of a DataSource's engine; for a server, read it only once connected. */
export function dialectOf(ds: DataSource): SqlDialect {
  if (ds.options.type === 'better-sqlite3') return sqliteDialect;
  // The driver reads the server version when it connects.
  return dialectForServerVersion((ds.driver as { version?: string }).version ?? '');
}
