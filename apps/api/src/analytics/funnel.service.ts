import { AppConfig } from '@app/config';
import { rate, reportMeta, StatsQuery } from '@app/stats';
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

  async report(
    query: StatsQuery,
    params: Pick<FunnelQueryDto, 'steps' | 'window_hours'>,
  ): Promise<FunnelResponseDto> {
    const { funnelMaxSteps, funnelStepsMaxBytes } = this.config.limits;
    const steps = parseFunnelSteps(params.steps, { maxSteps: funnelMaxSteps, maxBytes: funnelStepsMaxBytes });
    const visitors = await this.queries.visitorsPerStep(query, steps, params.window_hours);
    return {
      data: funnelData(steps, visitors, params.window_hours),
      meta: reportMeta(query),
    };
  }
}
