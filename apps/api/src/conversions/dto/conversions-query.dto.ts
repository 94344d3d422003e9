import { DateRangeQueryDto } from '@app/common';

/** Only the date range of SPEC §3. */
export class ConversionsQueryDto extends DateRangeQueryDto {}
