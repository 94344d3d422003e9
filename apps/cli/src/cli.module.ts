import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/db';
import { IngestModule } from '@app/ingest';
import { Injectable, Module } from '@nestjs/common';
import type { Command } from 'commander';
import { InjectCommander } from 'nest-commander';
import { AdminService } from './admin.service';
import { AggregateCommand } from './commands/aggregate.command';
import { DemoLiveCommand } from './commands/demo-live.command';
import { DemoCommand } from './commands/demo.command';
import { ImportCommand } from './commands/import.command';
import { MigrateCommand } from './commands/migrate.command';
import { OPERATOR_COMMANDS } from './commands/operator.commands';
import { Output } from './output';

/** The commander program nest-commander builds, for main.ts to name it and declare --json. */
@Injectable()
export class CliProgram {
  constructor(@InjectCommander() readonly commander: Command) {}
}

@Module({
  imports: [ConfigModule, DatabaseModule.forRoot('admin'), IngestModule],
  providers: [
    Output,
    CliProgram,
    AdminService,
    MigrateCommand,
    ImportCommand,
    AggregateCommand,
    DemoCommand,
    DemoLiveCommand,
    ...OPERATOR_COMMANDS,
  ],
})
export class CliModule {}
