import { Module } from '@nestjs/common';
import { StatsQueryParser } from './query/stats-query';
import { ReportDb } from './report-db';
import { StatsRepository } from './stats.repository';

@Module({
  providers: [ReportDb, StatsRepository, StatsQueryParser],
  exports: [ReportDb, StatsRepository, StatsQueryParser],
})
export class StatsModule {}
