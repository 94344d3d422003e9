import { StatsModule } from '@app/stats';
import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsQueries } from './events.queries';
import { EventsService } from './events.service';

@Module({
  imports: [StatsModule],
  controllers: [EventsController],
  providers: [EventsService, EventsQueries],
})
export class EventsModule {}
