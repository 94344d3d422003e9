import { DateRangeQueryDto, PaginationQueryDto } from '@app/common';
import { IntersectionType } from '@nestjs/swagger';

/** The date range of SPEC §3 and the page/limit of `/sites`. */
export class EventsQueryDto extends IntersectionType(DateRangeQueryDto, PaginationQueryDto) {}
