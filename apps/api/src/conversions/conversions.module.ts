import { StatsModule } from '@app/stats';
import { Module } from '@nestjs/common';
import { ConversionsController } from './conversions.controller';
import { ConversionsQueries } from './conversions.queries';
import { ConversionsService } from './conversions.service';

@Module({
  imports: [StatsModule],
  controllers: [ConversionsController],
  providers: [ConversionsService, ConversionsQueries],
})
export class ConversionsModule {}
