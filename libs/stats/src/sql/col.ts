import { sql } from 'kysely';

/** A column of a table alias, quoted by the builder. */
export const col = (alias: string, column: string) => sql.ref(`${alias}.${column}`);
