import { AppConfig } from '@app/config';
import type { Site } from '@app/db';
import { rate, reportMeta, reportRange } from '@app/stats';
import { Injectable } from '@nestjs/common';
import { FunnelDataDto, FunnelQueryDto, FunnelResponseDto } from './dto/funnel.dto';
import { FunnelQueries } from './funnel.queries';
import { FunnelStep, parseFunnelSteps } from './funnel-steps';

/** Step results from visitors per step: conversion against step 1, drop-off against the step before. */
export function funnelData(steps: FunnelStep[], visitors: number[], windowHours: number): FunnelDataDto {
  const entered = visitors[0] ?? 0;
  const completed = visitors[visitors.length - 1] ?? 0;
  return {
    window_hours: windowHours,
    steps: steps.map((definition, i) => {
      const previous = i === 0 ? visitors[0] : visitors[i - 1];
      const dropOff = previous - visitors[i];
      return {
        step: i + 1,
        ...definition,
        visitors: visitors[i],
        conversion_rate: rate(visitors[i], entered),
        drop_off: dropOff,
        drop_off_rate: rate(dropOff, previous),
      };
    }),
    completed_visitors: completed,
    conversion_rate: rate(completed, entered),
  };
}

@Injectable()
export class FunnelService {
  constructor(
    private readonly queries: FunnelQueries,
    private readonly config: AppConfig,
  ) {}

  async funnel(site: Site, query: FunnelQueryDto): Promise<FunnelResponseDto> {
    const { funnelMaxSteps, funnelStepsMaxBytes, maxRangeDays } = this.config.limits;
    const steps = parseFunnelSteps(query.steps, { maxSteps: funnelMaxSteps, maxBytes: funnelStepsMaxBytes });
    const range = reportRange(query, site, maxRangeDays);
    const visitors = await this.queries.visitorsPerStep(site.id, range, steps, query.window_hours);
    return { data: funnelData(steps, visitors, query.window_hours), meta: reportMeta(site.id, range) };
  }
}
