/**
 * The SQL of every report statement, generated from fixed example queries and committed under
 * sql/<engine>/ (one file per statement), so that every change to generated SQL shows in
 * review. `npm run sql:sync` rewrites the files; a unit test fails when one is stale.
 */
import { mariadbDialect, SqlDialect } from '@app/db/dialect';
import {
  GoalDefinition,
  parseFilters,
  ReportStatement,
  resolveRange,
  sessionPagesComplement,
  sharedStatements,
  StatsQuery,
  storedGoalSelection,
} from '@app/stats';
import { buckets } from '@app/stats/date-range';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format } from 'sql-formatter';
import { breakdownStatements } from '../apps/api/src/analytics/breakdown.queries';
import { engagementStatements } from '../apps/api/src/analytics/engagement.queries';
import { funnelStatements } from '../apps/api/src/analytics/funnel.queries';
import {
  listParts,
  overviewStatements,
  TOP_LIST_STATEMENTS,
} from '../apps/api/src/analytics/overview.queries';
import { realtimeStatements } from '../apps/api/src/analytics/realtime.queries';
import { conversionsStatements } from '../apps/api/src/conversions/conversions.queries';
import { ecommerceStatements } from '../apps/api/src/ecommerce/ecommerce.queries';
import { eventsStatements } from '../apps/api/src/events/events.queries';

export const SNAPSHOT_ROOT = path.join(__dirname, '../sql');

/** A site in a zone that changes offset inside the range, so the local-time CASE shows. */
const query: StatsQuery = {
  site: { id: 7, timezone: 'Europe/Berlin', currency: 'EUR', trackingMode: 'full' },
  range: resolveRange({
    from: '2026-03-20',
    to: '2026-04-02',
    siteTimezone: 'Europe/Berlin',
    maxDays: 731,
  }),
  filters: [],
};
/** The same query forced onto the raw tables: the parity reference. */
const raw: StatsQuery = { ...query, tables: 'raw' };
const goals: GoalDefinition[] = [
  { id: 1, type: 'event', matchValue: 'signup' },
  { id: 2, type: 'path', matchValue: '/thank-you*' },
];
const days = buckets(query.range, 'day');
/** Filtered on one session attribute (the rollup answers) and on every kind of dimension (raw). */
const byCountry: StatsQuery = { ...query, filters: parseFilters('country==DE|FR;country!=A*') };
/** As a request reads it: the two combinations its conditions select listed (StatsQueryParser). */
const twoAttributes: StatsQuery = {
  ...query,
  filters: parseFilters('country==DE;device!=mobile'),
  combinations: ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210'],
};
const everyKind: StatsQuery = {
  ...query,
  filters: [
    ...parseFilters('source!=(direct);entry_page==/blog/*|/;exit_page!=/thank-you;page==/pricing|/docs/*'),
    { dimension: 'goal', operator: '==', values: [{ text: '2', prefix: false }], goals: [goals[1]] },
  ],
};
/** Conditions on goals only: the stored goals of the settled sessions select them (storedGoalSelection). */
const goalCondition = (operator: '==' | '!=', goal: GoalDefinition) => ({
  dimension: 'goal' as const,
  operator,
  values: [{ text: String(goal.id), prefix: false }],
  goals: [goal],
});
const goalsOnly: StatsQuery = {
  ...query,
  filters: [goalCondition('==', goals[1]), goalCondition('!=', goals[0])],
};
/** `page==` one path with nothing queued: the sessions read from session_pages (sessionsSource). */
const onePage: StatsQuery = { ...query, filters: parseFilters('page==/pricing'), pageRowsCurrent: true };
/** `exit_page==` one whole path: the rows under it whose session left by it, from session_pages (sessionsSource). */
const exitPage: StatsQuery = { ...query, filters: parseFilters('exit_page==/pricing') };
/** `entry_page==` a prefix: each of the range's sessions tested, its pages grouped by pathGroupKey. */
const entryPrefix: StatsQuery = { ...query, filters: parseFilters('entry_page==/blog/*') };
const live = { siteId: 7, since: new Date('2026-04-02T11:30:00Z'), until: new Date('2026-04-02T12:00:00Z') };

/** Every report statement, by file name. */
export const SNAPSHOTS: Record<string, ReportStatement<unknown>> = {
  'shared.session-totals': sharedStatements.sessionTotals(query, [
    'sessions',
    'bounces',
    'sessionPageviews',
    'durationSeconds',
  ]),
  'shared.session-visitors': sharedStatements.sessionTotals(query, ['visitors']),
  'shared.session-totals.raw': sharedStatements.sessionTotals(raw, ['sessions', 'bounces']),
  'shared.pageview-totals': sharedStatements.pageviewTotals(query, ['pageviews']),
  'shared.site-goals': sharedStatements.siteGoals(7),
  'shared.data-version': sharedStatements.dataVersion(7),
  'overview.top-lists': overviewStatements.topLists(query, 10, TOP_LIST_STATEMENTS[0]),
  'overview.top-lists.entry-path': overviewStatements.topLists(query, 10, TOP_LIST_STATEMENTS[1]),
  'overview.top-lists.raw': overviewStatements.topLists(raw, 10),
  // Each day's and block's top rows of two lists, then their candidates' totals (OverviewQueries.listsFromTopRows).
  'overview.part-top-rows': overviewStatements.partTopRows(
    query,
    ['source', 'entry_path'],
    listParts(query)!,
    20,
  ),
  'overview.candidate-totals': overviewStatements.candidateTotals(
    query,
    new Map([
      ['source', ['google', 'bing']],
      ['entry_path', ['0123456789abcdef0123456789abcdef']],
    ]),
    listParts(query)!,
  ),
  'filtered.session-totals.by-country': sharedStatements.sessionTotals(byCountry, ['sessions', 'bounces']),
  'filtered.session-totals.two-attributes': sharedStatements.sessionTotals(twoAttributes, [
    'sessions',
    'bounces',
  ]),
  'filtered.breakdown.series-sums.two-attributes': breakdownStatements.seriesSums(
    twoAttributes,
    { metric: 'sessions', dimension: 'channel', goals: [] },
    ['Search', 'Social'],
    days,
  ),
  'filtered.session-totals.every-kind': sharedStatements.sessionTotals(everyKind, ['sessions', 'visitors']),
  'filtered.pageview-totals.every-kind': sharedStatements.pageviewTotals(everyKind, ['pageviews']),
  'filtered.session-totals.one-page': sharedStatements.sessionTotals(onePage, ['sessions', 'visitors']),
  'filtered.pageview-totals.one-page': sharedStatements.pageviewTotals(onePage, ['pageviews']),
  'filtered.session-totals-with-pageviews.one-page': sharedStatements.sessionTotalsWithPageviews(onePage, [
    'sessions',
    'bounces',
    'visitors',
  ]),
  // `page!=` one path with its rows current: the site's totals less the path's rows (sessionPagesComplement).
  'filtered.session-totals.without-one-page': sharedStatements.sessionTotals(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    ['sessions', 'bounces', 'sessionPageviews', 'durationSeconds'],
  ),
  // `page!=` one path with its rows current, visitors (distinct, no difference): each session's
  // row under the path looked up by key (noPageRowOfSessionsRow).
  'filtered.session-totals.visitors-without-one-page': sharedStatements.sessionTotals(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    ['sessions', 'visitors'],
  ),
  'filtered.top-lists.one-page': overviewStatements.topLists(onePage, 10),
  // `page!=` one path with its rows current: the site's lists less the path's rows.
  'filtered.top-lists.without-one-page': overviewStatements.topLists(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    10,
    ['channel', 'source', 'country', 'device'],
  ),
  'filtered.top-lists.entry-path.without-one-page': overviewStatements.topLists(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    10,
    ['entry_path'],
  ),
  'filtered.session-totals.exit-page': sharedStatements.sessionTotals(exitPage, ['sessions', 'visitors']),
  'filtered.top-lists.exit-page': overviewStatements.topLists(exitPage, 10),
  'filtered.top-lists.entry-prefix': overviewStatements.topLists(entryPrefix, 10),
  'filtered.conversions.stored-converted-counts.one-page': conversionsStatements.storedConvertedCounts(
    onePage,
    goals,
  ),
  // `page!=` one path with its rows current: the site's conversion rollups less the path's stored goals.
  'filtered.conversions.converted-counts-less-page': conversionsStatements.convertedCountsLessPage(
    sessionPagesComplement(
      { ...onePage, filters: parseFilters('page!=/pricing') },
      { metrics: ['sessions'] },
    )!,
    goals,
  ),
  // `page!=` one path with its rows current: the site's pageview rollup less the path's sessions' pageviews.
  'filtered.engagement.pageview-engagement.without-one-page': engagementStatements.pageviewEngagement({
    ...onePage,
    filters: parseFilters('page!=/pricing'),
  }),
  'filtered.top-lists.by-country': overviewStatements.topLists(byCountry, 10),
  'filtered.top-lists.two-attributes': overviewStatements.topLists(twoAttributes, 10),
  'filtered.funnel.every-kind': funnelStatements.visitorsPerStepBackwards(
    everyKind,
    [
      { type: 'pageview', path: '/products*' },
      { type: 'event', name: 'add_to_cart' },
    ],
    24,
  ),
  'filtered.ecommerce.order-totals.every-kind': ecommerceStatements.orderTotals(everyKind),
  'filtered.events.every-kind': eventsStatements.registeredEventsPage(everyKind, 0, 100),
  'filtered.events.page-event-rollups.one-page': eventsStatements.rolledUpPageEventsPage(
    onePage,
    { path: '/pricing', without: false },
    0,
    100,
  ),
  'filtered.events.page-event-rollups.without-one-page': eventsStatements.rolledUpPageEventsPage(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    { path: '/pricing', without: true },
    0,
    100,
  ),
  ...Object.fromEntries(
    (['sessions', 'bounce_rate', 'conv_rate', 'pageviews', 'revenue'] as const).flatMap((metric) => {
      const request = { metric, dimension: 'channel' as const, goals: metric === 'conv_rate' ? goals : [] };
      return [
        [`breakdown.top-values.${metric}`, breakdownStatements.topValues(query, request, 5)],
        [
          `breakdown.series-sums.${metric}`,
          breakdownStatements.seriesSums(query, request, ['Search', 'Social'], days),
        ],
      ];
    }),
  ),
  'engagement.pageview-engagement': engagementStatements.pageviewEngagement(query),
  'engagement.visitor-returns': engagementStatements.visitorReturns(query),
  'engagement.new-visitors': engagementStatements.newVisitors(query),
  'funnel.visitors-per-step-backwards': funnelStatements.visitorsPerStepBackwards(
    query,
    [
      { type: 'pageview', path: '/products*' },
      { type: 'event', name: 'add_to_cart' },
      { type: 'pageview', path: '/thank-you' },
    ],
    24,
  ),
  'funnel.visitors-per-step': funnelStatements.visitorsPerStep(
    query,
    [
      { type: 'pageview', path: '/products*' },
      { type: 'event', name: 'add_to_cart' },
      { type: 'pageview', path: '/thank-you' },
    ],
    24,
  ),
  'realtime.active-visitors': realtimeStatements.activeVisitors(live),
  'realtime.pageview-count': realtimeStatements.pageviewCount(live),
  'realtime.recent-pageviews': realtimeStatements.recentPageviews(live, 20),
  'realtime.recent-events': realtimeStatements.recentEvents(live, 20),
  'realtime.active-pages': realtimeStatements.activePages(live, 10),
  'events.registered-event-count': eventsStatements.registeredEventCount(7),
  'events.registered-events-page': eventsStatements.registeredEventsPage(query, 0, 100),
  'events.rolled-up-events-page': eventsStatements.rolledUpEventsPage(query, 0, 100),
  'conversions.conversion-counts': conversionsStatements.conversionCounts(query, goals),
  'conversions.rolled-up-conversion-counts': conversionsStatements.rolledUpConversionCounts(query, goals),
  'conversions.stored-converted-counts': conversionsStatements.storedConvertedCounts(byCountry, goals),
  'conversions.stored-goal-conversion-counts': conversionsStatements.storedGoalConversionCounts(
    goalsOnly,
    goals,
    storedGoalSelection(goalsOnly.filters)!,
  ),
  'breakdown.series-sums.conv_rate.rolled-up': breakdownStatements.seriesSums(
    query,
    { metric: 'conv_rate', dimension: 'channel', goals, goalsRolledUp: true },
    ['Search', 'Social'],
    days,
  ),
  'filtered.breakdown.series-sums.conv_rate.stored': breakdownStatements.seriesSums(
    everyKind,
    { metric: 'conv_rate', dimension: 'channel', goals, goalsRolledUp: true },
    ['Search', 'Social'],
    days,
  ),
  'filtered.breakdown.series-sums.pageviews.exit-page': breakdownStatements.seriesSums(
    exitPage,
    { metric: 'pageviews', dimension: 'country', goals: [] },
    ['DE', 'FR'],
    days,
  ),
  'filtered.breakdown.ranked-series-sums.one-page': breakdownStatements.rankedSeriesSums(
    onePage,
    { metric: 'bounce_rate', dimension: 'country', goals: [] },
    5,
    days,
  ),
  // `page!=` one path with its rows current: the site's session rollup rows less the path's rows.
  'filtered.breakdown.ranked-series-sums.without-one-page': breakdownStatements.rankedSeriesSums(
    { ...onePage, filters: parseFilters('page!=/pricing') },
    { metric: 'bounce_rate', dimension: 'country', goals: [] },
    5,
    days,
  ),
  'filtered.breakdown.series-sums.conv_rate.goal-attributes': breakdownStatements.seriesSums(
    byCountry,
    { metric: 'conv_rate', dimension: 'channel', goals, goalsRolledUp: true },
    ['Search', 'Social'],
    days,
  ),
  'filtered.conversions.rolled-up-conversion-counts.by-country':
    conversionsStatements.rolledUpConversionCounts(byCountry, goals),
  'ecommerce.order-totals': ecommerceStatements.orderTotals(query),
  'ecommerce.order-totals.raw': ecommerceStatements.orderTotals(raw),
  'ecommerce.purchasing-sessions': ecommerceStatements.purchasingSessions(query),
  'ecommerce.purchasing-sessions-by-orders': ecommerceStatements.purchasingSessionsByOrders(query),
  'ecommerce.purchasing-sessions-by-rollup': ecommerceStatements.purchasingSessionsByRollup(query),
  'filtered.ecommerce.purchasing-sessions-by-orders.one-page':
    ecommerceStatements.purchasingSessionsByOrders(onePage),
  // `page!=` one path with its rows current: the site's purchase rollup less the path's rows.
  'filtered.ecommerce.purchasing-sessions.without-one-page': ecommerceStatements.purchasingSessionsLessPage(
    sessionPagesComplement(
      { ...onePage, filters: parseFilters('page!=/pricing') },
      { metrics: ['sessions'] },
    )!,
  ),
  'ecommerce.top-products': ecommerceStatements.topProducts(query, 10),
  'ecommerce.top-product-totals': ecommerceStatements.topProductTotals(query, 10),
  'ecommerce.first-quarters': ecommerceStatements.firstQuarters(query, ['SKU-1', 'SKU-2']),
  'ecommerce.names-at': ecommerceStatements.namesAt(query, [
    { sku: 'SKU-1', b: new Date('2026-03-20T10:15:00Z'), e: new Date('2026-03-20T10:30:00Z') },
    { sku: 'SKU-2', b: new Date('2026-03-21T00:00:00Z'), e: new Date('2026-03-21T00:15:00Z') },
  ]),
  'ecommerce.revenue-by-day': ecommerceStatements.revenueByDay(query),
  'ecommerce.revenue-by-day.raw': ecommerceStatements.revenueByDay(raw),
  'filtered.ecommerce.order-totals-by-day.one-page': ecommerceStatements.orderTotalsByDay(onePage),
  'filtered.ecommerce.order-totals-by-day.without-one-page': ecommerceStatements.orderTotalsByDay({
    ...onePage,
    filters: parseFilters('page!=/pricing'),
  }),
};

const ENGINES: Array<{ dir: string; dialect: SqlDialect; formatterLanguage: 'mariadb' }> = [
  { dir: 'mariadb', dialect: mariadbDialect, formatterLanguage: 'mariadb' },
];

const param = (value: unknown) => (value instanceof Date ? value.toISOString() : JSON.stringify(value));

/** The committed text of every snapshot, keyed by its path relative to sql/. */
export function renderSnapshots(): Map<string, string> {
  const files = new Map<string, string>();
  for (const engine of ENGINES) {
    for (const [name, statement] of Object.entries(SNAPSHOTS)) {
      const compiled = engine.dialect.renderIndexHints(statement(engine.dialect));
      const params = compiled.parameters.map((p, i) => `--   $${i + 1} = ${param(p)}`).join('\n');
      const text =
        `-- ${name} (${engine.dir}); generated by \`npm run sql:sync\`, do not edit.\n` +
        (params ? `-- parameters:\n${params}\n` : '') +
        `${format(compiled.sql, { language: engine.formatterLanguage, tabWidth: 2, keywordCase: 'upper' })};\n`;
      files.set(`${engine.dir}/${name}.sql`, text);
    }
  }
  return files;
}

if (require.main === module) {
  rmSync(SNAPSHOT_ROOT, { recursive: true, force: true });
  const files = renderSnapshots();
  for (const [file, text] of files) {
    mkdirSync(path.dirname(path.join(SNAPSHOT_ROOT, file)), { recursive: true });
    writeFileSync(path.join(SNAPSHOT_ROOT, file), text);
  }
  process.stdout.write(
    `wrote ${files.size} SQL snapshots under sql/ (${readdirSync(SNAPSHOT_ROOT).join(', ')})\n`,
  );
}
