import { Module } from '@nestjs/common';
import { ReportDb } from './report-db';

@Module({ providers: [ReportDb], exports: [ReportDb] })
export class StatsModule {}
