import { AppConfig } from '@app/config';
import { ApiAccountError, ApiAccountGrants, DatabaseConnector, provisionApiAccount } from '@app/db';
import { Command, CommandRunner } from 'nest-commander';
import { CliError, Output } from '../output';

@Command({
  name: 'migrate',
  description:
    'Create the database if needed, apply pending migrations, and (when API_DATABASE_URL names a user of its own) ' +
    "create or update the API's read-only database user",
})
export class MigrateCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly config: AppConfig,
    private readonly out: Output,
  ) {
    super();
  }

  async run(): Promise<void> {
    const ds = await this.db.connect({ createDatabase: true });
    try {
      const applied = await ds.runMigrations({ transaction: 'each' });
      const names = applied.map((m) => m.name);
      const grants = await this.provisionApiUser((sql, params) => ds.query(sql, params));
      this.out.result(
        { applied: names, api_user: grants },
        [
          names.length
            ? `applied ${names.length} migration(s): ${names.join(', ')}`
            : 'the schema is up to date',
          this.config.embedded
            ? 'embedded SQLite: the API opens the file read-only'
            : grants
              ? `API database user ${grants.user}@${grants.host}: SELECT on ${grants.select.join(', ')}; ` +
                `UPDATE on ${grants.update.join(', ')}` +
                (grants.revoked.length ? `; revoked ${grants.revoked.join(', ')}` : '')
              : 'API_DATABASE_URL is not set to a user of its own: the API connects as the admin user',
        ].join('\n'),
      );
    } finally {
      await this.db.close();
    }
  }

  private async provisionApiUser(
    query: (sql: string, params?: unknown[]) => Promise<unknown>,
  ): Promise<ApiAccountGrants | null> {
    const admin = this.config.database;
    const api = this.config.apiDatabase;
    if (this.config.embedded || api === admin || api.user === admin.user) return null;
    if (api.database !== admin.database) {
      throw new CliError(
        `API_DATABASE_URL names database ${api.database}, DATABASE_URL ${admin.database}: they must be the same`,
      );
    }
    try {
      return await provisionApiAccount(
        { query },
        {
          user: api.user,
          password: api.password,
          host: this.config.dbReliability.apiUserHost,
          database: admin.database,
        },
      );
    } catch (e) {
      if (e instanceof ApiAccountError) throw new CliError(e.message);
      throw e;
    }
  }
}
