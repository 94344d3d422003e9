import { PageMetaDto } from '@app/common';
import { ApiProperty } from '@nestjs/swagger';

export class SiteDto {
  @ApiProperty({ example: 1 })
  id!: number;

  @ApiProperty({ example: 'Shop' })
  name!: string;

  @ApiProperty({ example: 'shop.example' })
  domain!: string;

  /** IANA time zone: the default report timezone of the site. */
  @ApiProperty({ example: 'Europe/Berlin' })
  timezone!: string;

  /** ISO 4217 code of every money amount of the site. */
  @ApiProperty({ example: 'EUR' })
  currency!: string;

  /** `cookieless` sites rotate visitor ids daily, so returning visitors cannot be told. */
  @ApiProperty({ enum: ['full', 'cookieless'], example: 'full' })
  tracking_mode!: 'full' | 'cookieless';

  @ApiProperty({ example: '2026-01-15T09:30:00.000Z', format: 'date-time' })
  created_at!: string;
}

export class SitesResponseDto {
  data!: SiteDto[];

  meta!: PageMetaDto;
}
