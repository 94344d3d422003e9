import { Global, Module } from '@nestjs/common';
import { AccessRepository } from './access.repository';
import { ApiKeyGuard } from './api-key.guard';
import { SiteAccessGuard } from './site-access.guard';

@Global()
@Module({
  providers: [AccessRepository, ApiKeyGuard, SiteAccessGuard],
  exports: [AccessRepository, ApiKeyGuard, SiteAccessGuard],
})
export class AuthModule {}
