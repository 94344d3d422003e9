import { SqliteSchema1765100000000 } from './1765100000000-sqlite-schema';

export const SQLITE_MIGRATIONS = [SqliteSchema1765100000000];
