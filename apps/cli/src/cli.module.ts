import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/db';
import { IngestModule } from '@app/ingest';
import { Module } from '@nestjs/common';
import { AdminService } from './admin.service';
import { AggregateCommand } from './commands/aggregate.command';
import { DemoCommand } from './commands/demo.command';
import { ImportCommand } from './commands/import.command';
import { MigrateCommand } from './commands/migrate.command';
import { OPERATOR_COMMANDS } from './commands/operator.commands';
import { Output } from './output';

@Module({
  imports: [ConfigModule, DatabaseModule.forRoot('admin'), IngestModule],
  providers: [
    Output,
    AdminService,
    MigrateCommand,
    ImportCommand,
    AggregateCommand,
    DemoCommand,
    ...OPERATOR_COMMANDS,
  ],
})
export class CliModule {}
