import { StatsModule } from '@app/stats';
import { Global, Module } from '@nestjs/common';
import { ReportCacheInterceptor } from './report-cache.interceptor';
import { ReportCache } from './report-cache.service';

@Global()
@Module({
  imports: [StatsModule],
  providers: [ReportCache, ReportCacheInterceptor],
  exports: [ReportCache, ReportCacheInterceptor, StatsModule],
})
export class ReportCacheModule {}
