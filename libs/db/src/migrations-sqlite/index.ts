import { SqliteSchema1765100000000 } from './1765100000000-sqlite-schema';
import { SqliteVisitorSketches1765200000000 } from './1765200000000-visitor-sketches';

export const SQLITE_MIGRATIONS = [SqliteSchema1765100000000, SqliteVisitorSketches1765200000000];
