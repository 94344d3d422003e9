import { Module } from '@nestjs/common';
import { HitImporter } from './importer';
import { SessionAggregator } from './session-aggregator';

@Module({
  providers: [HitImporter, SessionAggregator],
  exports: [HitImporter, SessionAggregator],
})
export class IngestModule {}
