import { SqliteSchema1765100000000 } from './1765100000000-sqlite-schema';
import { SqliteVisitorSketches1765200000000 } from './1765200000000-visitor-sketches';
import { SqliteNewVisitorRollups1765300000000 } from './1765300000000-new-visitor-rollups';
import { SqliteSessionDayRollups1765400000000 } from './1765400000000-session-day-rollups';
import { SqliteGoalRollups1765500000000 } from './1765500000000-goal-rollups';
import { SqliteEventRollups1765600000000 } from './1765600000000-event-rollups';
import { SqlitePageviewRollups1765700000000 } from './1765700000000-pageview-rollups';
import { SqliteOrderRollups1765800000000 } from './1765800000000-order-rollups';
import { SqlitePurchaseRollups1765900000000 } from './1765900000000-purchase-rollups';
import { SqliteRevenueRollups1766000000000 } from './1766000000000-revenue-rollups';
import { SqliteVisitorValueSketches1766100000000 } from './1766100000000-visitor-value-sketches';
import { SqliteHitsByVisitorSteps1766200000000 } from './1766200000000-hits-by-visitor-steps';
import { SqliteSessionAttributeDayRollups1766300000000 } from './1766300000000-session-attribute-day-rollups';
import { SqliteSiteDayRollups1766400000000 } from './1766400000000-site-day-rollups';
import { SqliteEventDayRollups1766500000000 } from './1766500000000-event-day-rollups';
import { SqlitePathSpanRollups1766600000000 } from './1766600000000-path-span-rollups';
import { SqliteSessionPairDayRollups1766700000000 } from './1766700000000-session-pair-day-rollups';
import { SqliteHitsBySessionSteps1766800000000 } from './1766800000000-hits-by-session-steps';
import { SqliteHitsBySessionEngagement1766900000000 } from './1766900000000-hits-by-session-engagement';
import { SqliteHitsWithoutSiteTs1767000000000 } from './1767000000000-hits-without-site-ts';
import { SqliteSketchAdditions1767100000000 } from './1767100000000-sketch-additions';
import { SqliteGoalDayRollups1767200000000 } from './1767200000000-goal-day-rollups';
import { SqliteSessionSpanRollups1767300000000 } from './1767300000000-session-span-rollups';
import { SqliteLiveHits1767400000000 } from './1767400000000-live-hits';
import { SqliteSessionGoalStarts1767500000000 } from './1767500000000-session-goal-starts';
import { SqliteGoalAttributeRollups1767600000000 } from './1767600000000-goal-attribute-rollups';
import { SqliteSessionsByCombination1767700000000 } from './1767700000000-sessions-by-combination';
import { SqliteSessionsEngagement1767800000000 } from './1767800000000-sessions-engagement';
import { SqliteVisitorCombinationSketches1767900000000 } from './1767900000000-visitor-combination-sketches';
import { SqliteAttributeRollupEngagement1768000000000 } from './1768000000000-attribute-rollup-engagement';
import { SqliteSiteSessionBounds1768100000000 } from './1768100000000-site-session-bounds';
import { SqliteCombinationPathDayRollups1768200000000 } from './1768200000000-combination-path-day-rollups';
import { SqliteSessionsByRepeat1768300000000 } from './1768300000000-sessions-by-repeat';
import { SqliteCombinationsByAttribute1768400000000 } from './1768400000000-combinations-by-attribute';
import { SqliteCombinationFirstDays1768500000000 } from './1768500000000-combination-first-days';
import { SqliteTopRowsBySessions1768600000000 } from './1768600000000-top-rows-by-sessions';
import { SqliteSessionPages1768700000000 } from './1768700000000-session-pages';
import { SqliteSessionPagePriors1768800000000 } from './1768800000000-session-page-priors';
import { SqliteSessionPageHashes1768900000000 } from './1768900000000-session-page-hashes';
import { SqliteSessionPageFirstSessions1769000000000 } from './1769000000000-session-page-first-sessions';
import { SqliteSessionPagePriorVisits1769100000000 } from './1769100000000-session-page-prior-visits';
import { SqlitePageEventRollups1769200000000 } from './1769200000000-page-event-rollups';
import { SqliteSessionPagesByVisitor1769300000000 } from './1769300000000-session-pages-by-visitor';

export const SQLITE_MIGRATIONS = [
  SqliteSchema1765100000000,
  SqliteVisitorSketches1765200000000,
  SqliteNewVisitorRollups1765300000000,
  SqliteSessionDayRollups1765400000000,
  SqliteGoalRollups1765500000000,
  SqliteEventRollups1765600000000,
  SqlitePageviewRollups1765700000000,
  SqliteOrderRollups1765800000000,
  SqlitePurchaseRollups1765900000000,
  SqliteRevenueRollups1766000000000,
  SqliteVisitorValueSketches1766100000000,
  SqliteHitsByVisitorSteps1766200000000,
  SqliteSessionAttributeDayRollups1766300000000,
  SqliteSiteDayRollups1766400000000,
  SqliteEventDayRollups1766500000000,
  SqlitePathSpanRollups1766600000000,
  SqliteSessionPairDayRollups1766700000000,
  SqliteHitsBySessionSteps1766800000000,
  SqliteHitsBySessionEngagement1766900000000,
  SqliteHitsWithoutSiteTs1767000000000,
  SqliteSketchAdditions1767100000000,
  SqliteGoalDayRollups1767200000000,
  SqliteSessionSpanRollups1767300000000,
  SqliteLiveHits1767400000000,
  SqliteSessionGoalStarts1767500000000,
  SqliteGoalAttributeRollups1767600000000,
  SqliteSessionsByCombination1767700000000,
  SqliteSessionsEngagement1767800000000,
  SqliteVisitorCombinationSketches1767900000000,
  SqliteAttributeRollupEngagement1768000000000,
  SqliteSiteSessionBounds1768100000000,
  SqliteCombinationPathDayRollups1768200000000,
  SqliteSessionsByRepeat1768300000000,
  SqliteCombinationsByAttribute1768400000000,
  SqliteCombinationFirstDays1768500000000,
  SqliteTopRowsBySessions1768600000000,
  SqliteSessionPages1768700000000,
  SqliteSessionPagePriors1768800000000,
  SqliteSessionPageHashes1768900000000,
  SqliteSessionPageFirstSessions1769000000000,
  SqliteSessionPagePriorVisits1769100000000,
  SqlitePageEventRollups1769200000000,
  SqliteSessionPagesByVisitor1769300000000,
];
