/**
 * The API's database account, read-only by construction: `migrate` creates it and grants it
 * SELECT on the tables the API reads, plus the single write the API makes, UPDATE of
 * api_keys.last_used_at (the ApiKeyGuard's bookkeeping). Anything else the account may have
 * been granted on this database is revoked, so running `migrate` again converges to exactly
 * this set.
 */

/** Tables the API never reads: TypeORM's migration log, and users (e-mail addresses). */
export const API_UNREADABLE_TABLES: readonly string[] = ['migrations', 'users'];

/** The only columns the API may write, per table. */
export const API_WRITABLE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  api_keys: ['last_used_at'],
};

export interface ApiAccount {
  user: string;
  password: string;
  /** Host part of the account: `%` (anywhere) or a pattern such as `10.0.%`. */
  host: string;
  database: string;
}

export interface ApiAccountGrants {
  user: string;
  host: string;
  select: string[];
  update: string[];
  revoked: string[];
}

export class ApiAccountError extends Error {}

/** What `migrate` needs from a connection: raw SQL with `?`/`??` placeholders (mysql2). */
export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

interface TablePrivilege {
  table: string;
  privilege: string;
}

interface ColumnPrivilege extends TablePrivilege {
  column: string;
}

export async function provisionApiAccount(db: SqlRunner, account: ApiAccount): Promise<ApiAccountGrants> {
  const grantee = `'${account.user.replace(/'/g, "''")}'@'${account.host.replace(/'/g, "''")}'`;
  await db.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [
    account.user,
    account.host,
    account.password,
  ]);
  await db.query('ALTER USER ?@? IDENTIFIED BY ?', [account.user, account.host, account.password]);

  const global = (await db.query(
    "SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ? AND PRIVILEGE_TYPE <> 'USAGE'",
    [grantee],
  )) as Array<{ privilege: string }>;
  if (global.length > 0) {
    throw new ApiAccountError(
      `the API's database user ${grantee} holds server-wide privileges (${global.map((g) => g.privilege).join(', ')}); ` +
        'give the API a user of its own (API_DATABASE_URL) so that it can be made read-only',
    );
  }

  const tables = (
    (await db.query(
      "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
      [account.database],
    )) as Array<{ name: string }>
  ).map((t) => t.name);
  const readable = tables.filter((t) => !API_UNREADABLE_TABLES.includes(t));
  const writable: ColumnPrivilege[] = Object.entries(API_WRITABLE_COLUMNS)
    .filter(([table]) => tables.includes(table))
    .flatMap(([table, columns]) => columns.map((column) => ({ table, column, privilege: 'UPDATE' })));

  const revoked: string[] = [];
  const schemaGrants = (await db.query(
    'SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
    [grantee, account.database],
  )) as Array<{ privilege: string }>;
  if (schemaGrants.length > 0) {
    await db.query('REVOKE ALL PRIVILEGES ON ??.* FROM ?@?', [account.database, account.user, account.host]);
    for (const g of schemaGrants) revoked.push(`${g.privilege} ON ${account.database}.*`);
  }

  const tableGrants = (await db.query(
    'SELECT TABLE_NAME AS `table`, PRIVILEGE_TYPE AS privilege FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
    [grantee, account.database],
  )) as TablePrivilege[];
  for (const g of tableGrants) {
    if (g.privilege === 'SELECT' && readable.includes(g.table)) continue;
    await db.query(`REVOKE ${sqlPrivilege(g.privilege)} ON ??.?? FROM ?@?`, [
      account.database,
      g.table,
      account.user,
      account.host,
    ]);
    revoked.push(`${g.privilege} ON ${g.table}`);
  }

  const columnGrants = (await db.query(
    'SELECT TABLE_NAME AS `table`, COLUMN_NAME AS `column`, PRIVILEGE_TYPE AS privilege FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
    [grantee, account.database],
  )) as ColumnPrivilege[];
  for (const g of columnGrants) {
    if (writable.some((w) => w.table === g.table && w.column === g.column && w.privilege === g.privilege))
      continue;
    await db.query(`REVOKE ${sqlPrivilege(g.privilege)} (??) ON ??.?? FROM ?@?`, [
      g.column,
      account.database,
      g.table,
      account.user,
      account.host,
    ]);
    revoked.push(`${g.privilege} (${g.column}) ON ${g.table}`);
  }

  for (const table of readable) {
    await db.query('GRANT SELECT ON ??.?? TO ?@?', [account.database, table, account.user, account.host]);
  }
  for (const w of writable) {
    await db.query('GRANT UPDATE (??) ON ??.?? TO ?@?', [
      w.column,
      account.database,
      w.table,
      account.user,
      account.host,
    ]);
  }

  return {
    user: account.user,
    host: account.host,
    select: readable,
    update: writable.map((w) => `${w.table}.${w.column}`),
    revoked,
  };
}

/** Privilege names come from information_schema; only letters and spaces may reach the SQL. */
function sqlPrivilege(name: string): string {
  if (!/^[A-Z][A-Z ]*$/.test(name)) throw new ApiAccountError(`unexpected privilege name ${name}`);
  return name;
}
