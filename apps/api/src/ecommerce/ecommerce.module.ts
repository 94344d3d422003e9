import { StatsModule } from '@app/stats';
import { Module } from '@nestjs/common';
import { EcommerceController } from './ecommerce.controller';
import { EcommerceQueries } from './ecommerce.queries';
import { EcommerceService } from './ecommerce.service';

@Module({
  imports: [StatsModule],
  controllers: [EcommerceController],
  providers: [EcommerceService, EcommerceQueries],
})
export class EcommerceModule {}
