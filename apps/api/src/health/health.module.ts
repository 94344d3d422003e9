import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseAvailableMiddleware } from './database-available.middleware';
import { HealthController } from './health.controller';

@Module({
  // The DatabaseMonitor logs each outage once; Terminus would log every failed probe.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [DatabaseAvailableMiddleware],
  exports: [DatabaseAvailableMiddleware],
})
export class HealthModule {}
