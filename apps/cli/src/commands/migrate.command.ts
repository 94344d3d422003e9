import { DatabaseConnector } from '@app/db';
import { Command, CommandRunner } from 'nest-commander';
import { Output } from '../output';

@Command({ name: 'migrate', description: 'Create the database if needed and apply pending migrations' })
export class MigrateCommand extends CommandRunner {
  constructor(
    private readonly db: DatabaseConnector,
    private readonly out: Output,
  ) {
    super();
  }

  async run(): Promise<void> {
    const ds = await this.db.connect({ createDatabase: true });
    try {
      const applied = await ds.runMigrations({ transaction: 'each' });
      const names = applied.map((m) => m.name);
      this.out.result(
        { applied: names },
        names.length
          ? `applied ${names.length} migration(s): ${names.join(', ')}`
          : 'the schema is up to date',
      );
    } finally {
      await this.db.close();
    }
  }
}
