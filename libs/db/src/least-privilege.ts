import { API_WRITABLE_COLUMNS, SqlRunner } from './api-account';

/** Privileges that only read. Anything else the API's user holds on its data is a write privilege. */
const READ_ONLY = new Set(['SELECT', 'USAGE', 'SHOW VIEW']);

/** The API's database user may write more than api_keys.last_used_at; the API refuses to run as it. */
export class PrivilegedDatabaseUserError extends Error {
  constructor(
    readonly user: string,
    readonly privileges: string[],
  ) {
    super(
      `Refusing to start: the API's database user ${user} can write (${privileges.slice(0, 6).join(', ')}` +
        `${privileges.length > 6 ? ', …' : ''}). Set API_DATABASE_URL to the read-only account that ` +
        '`migrate` creates for it, or set ALLOW_PRIVILEGED_DB_USER=true to run as this user anyway.',
    );
  }
}

/**
 * The write privileges the connected user holds on `database` or server-wide (information_schema
 * shows a user its own grants), except the one column the API writes. Roles are not expanded.
 */
export async function writePrivileges(
  db: SqlRunner,
  database: string,
): Promise<{ user: string; privileges: string[] }> {
  const [{ user }] = (await db.query('SELECT CURRENT_USER() AS user')) as Array<{ user: string }>;
  const at = user.lastIndexOf('@');
  const grantee = `'${user.slice(0, at)}'@'${user.slice(at + 1)}'`;
  const writes = (rows: unknown, label: (r: Record<string, string>) => string) =>
    (rows as Array<Record<string, string>>).filter((r) => !READ_ONLY.has(r.privilege)).map(label);

  const global = writes(
    await db.query(
      'SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?',
      [grantee],
    ),
    (r) => `${r.privilege} ON *.*`,
  );
  const schema = writes(
    await db.query(
      'SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
      [grantee, database],
    ),
    (r) => `${r.privilege} ON ${database}.*`,
  );
  const tables = writes(
    await db.query(
      'SELECT TABLE_NAME AS `table`, PRIVILEGE_TYPE AS privilege FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
      [grantee, database],
    ),
    (r) => `${r.privilege} ON ${r.table}`,
  );
  const columns = (
    (await db.query(
      'SELECT TABLE_NAME AS `table`, COLUMN_NAME AS `column`, PRIVILEGE_TYPE AS privilege FROM information_schema.COLUMN_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?',
      [grantee, database],
    )) as Array<Record<string, string>>
  )
    .filter(
      (r) =>
        !READ_ONLY.has(r.privilege) &&
        !(r.privilege === 'UPDATE' && (API_WRITABLE_COLUMNS[r.table] ?? []).includes(r.column)),
    )
    .map((r) => `${r.privilege} (${r.column}) ON ${r.table}`);
  return { user, privileges: [...global, ...schema, ...tables, ...columns] };
}
