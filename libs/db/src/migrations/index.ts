import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { ExactCollation1764000000000 } from './1764000000000-exact-collation';
import { SiteDataVersions1764300000000 } from './1764300000000-site-data-versions';
import { SessionRollups1764400000000 } from './1764400000000-session-rollups';
import { HitRollups1764500000000 } from './1764500000000-hit-rollups';
import { SessionPathRollups1764600000000 } from './1764600000000-session-path-rollups';
import { SessionAttributeRollups1764700000000 } from './1764700000000-session-attribute-rollups';
import { VisitorsByFirstSession1764800000000 } from './1764800000000-visitors-by-first-session';
import { SessionsByEnd1764900000000 } from './1764900000000-sessions-by-end';
import { HitsByStep1765000000000 } from './1765000000000-hits-by-step';
import { VisitorSketches1765200000000 } from './1765200000000-visitor-sketches';
import { NewVisitorRollups1765300000000 } from './1765300000000-new-visitor-rollups';
import { SessionDayRollups1765400000000 } from './1765400000000-session-day-rollups';
import { GoalRollups1765500000000 } from './1765500000000-goal-rollups';
import { EventRollups1765600000000 } from './1765600000000-event-rollups';
import { PageviewRollups1765700000000 } from './1765700000000-pageview-rollups';
import { OrderRollups1765800000000 } from './1765800000000-order-rollups';
import { PurchaseRollups1765900000000 } from './1765900000000-purchase-rollups';
import { RevenueRollups1766000000000 } from './1766000000000-revenue-rollups';
import { VisitorValueSketches1766100000000 } from './1766100000000-visitor-value-sketches';
import { HitsByVisitorSteps1766200000000 } from './1766200000000-hits-by-visitor-steps';
import { SessionAttributeDayRollups1766300000000 } from './1766300000000-session-attribute-day-rollups';
import { SiteDayRollups1766400000000 } from './1766400000000-site-day-rollups';
import { EventDayRollups1766500000000 } from './1766500000000-event-day-rollups';
import { PathSpanRollups1766600000000 } from './1766600000000-path-span-rollups';
import { SessionPairDayRollups1766700000000 } from './1766700000000-session-pair-day-rollups';
import { HitsBySessionSteps1766800000000 } from './1766800000000-hits-by-session-steps';
import { HitsBySessionEngagement1766900000000 } from './1766900000000-hits-by-session-engagement';
import { HitsWithoutSiteTs1767000000000 } from './1767000000000-hits-without-site-ts';
import { SketchAdditions1767100000000 } from './1767100000000-sketch-additions';
import { GoalDayRollups1767200000000 } from './1767200000000-goal-day-rollups';
import { SessionSpanRollups1767300000000 } from './1767300000000-session-span-rollups';
import { LiveHits1767400000000 } from './1767400000000-live-hits';
import { SessionGoalStarts1767500000000 } from './1767500000000-session-goal-starts';
import { GoalAttributeRollups1767600000000 } from './1767600000000-goal-attribute-rollups';
import { SessionsByCombination1767700000000 } from './1767700000000-sessions-by-combination';
import { SessionsEngagement1767800000000 } from './1767800000000-sessions-engagement';
import { VisitorCombinationSketches1767900000000 } from './1767900000000-visitor-combination-sketches';
import { AttributeRollupEngagement1768000000000 } from './1768000000000-attribute-rollup-engagement';
import { SiteSessionBounds1768100000000 } from './1768100000000-site-session-bounds';
import { CombinationPathDayRollups1768200000000 } from './1768200000000-combination-path-day-rollups';
import { SessionsByRepeat1768300000000 } from './1768300000000-sessions-by-repeat';
import { CombinationsByAttribute1768400000000 } from './1768400000000-combinations-by-attribute';
import { CombinationFirstDays1768500000000 } from './1768500000000-combination-first-days';
import { TopRowsBySessions1768600000000 } from './1768600000000-top-rows-by-sessions';
import { SessionPages1768700000000 } from './1768700000000-session-pages';
import { SessionPagePriors1768800000000 } from './1768800000000-session-page-priors';
import { SessionPageHashes1768900000000 } from './1768900000000-session-page-hashes';
import { SessionPageFirstSessions1769000000000 } from './1769000000000-session-page-first-sessions';
import { SessionPagePriorVisits1769100000000 } from './1769100000000-session-page-prior-visits';
import { PageEventRollups1769200000000 } from './1769200000000-page-event-rollups';
import { SessionPagesByVisitor1769300000000 } from './1769300000000-session-pages-by-visitor';

export const MIGRATIONS = [
  InitialSchema1763800000000,
  ExactCollation1764000000000,
  SiteDataVersions1764300000000,
  SessionRollups1764400000000,
  HitRollups1764500000000,
  SessionPathRollups1764600000000,
  SessionAttributeRollups1764700000000,
  VisitorsByFirstSession1764800000000,
  SessionsByEnd1764900000000,
  HitsByStep1765000000000,
  VisitorSketches1765200000000,
  NewVisitorRollups1765300000000,
  SessionDayRollups1765400000000,
  GoalRollups1765500000000,
  EventRollups1765600000000,
  PageviewRollups1765700000000,
  OrderRollups1765800000000,
  PurchaseRollups1765900000000,
  RevenueRollups1766000000000,
  VisitorValueSketches1766100000000,
  HitsByVisitorSteps1766200000000,
  SessionAttributeDayRollups1766300000000,
  SiteDayRollups1766400000000,
  EventDayRollups1766500000000,
  PathSpanRollups1766600000000,
  SessionPairDayRollups1766700000000,
  HitsBySessionSteps1766800000000,
  HitsBySessionEngagement1766900000000,
  HitsWithoutSiteTs1767000000000,
  SketchAdditions1767100000000,
  GoalDayRollups1767200000000,
  SessionSpanRollups1767300000000,
  LiveHits1767400000000,
  SessionGoalStarts1767500000000,
  GoalAttributeRollups1767600000000,
  SessionsByCombination1767700000000,
  SessionsEngagement1767800000000,
  VisitorCombinationSketches1767900000000,
  AttributeRollupEngagement1768000000000,
  SiteSessionBounds1768100000000,
  CombinationPathDayRollups1768200000000,
  SessionsByRepeat1768300000000,
  CombinationsByAttribute1768400000000,
  CombinationFirstDays1768500000000,
  TopRowsBySessions1768600000000,
  SessionPages1768700000000,
  SessionPagePriors1768800000000,
  SessionPageHashes1768900000000,
  SessionPageFirstSessions1769000000000,
  SessionPagePriorVisits1769100000000,
  PageEventRollups1769200000000,
  SessionPagesByVisitor1769300000000,
];
