/**
 * `npm test` (scripts/test.sh) runs the e2e suites of both engines side by side, two Jest runs
 * at once, and then, alone on the machine, the suites listed here: they drive load, wait on
 * timeouts and connection deadlines, count requests per minute, or start whole process trees
 * (the demo, several API processes, Chromium), so a run beside them would slow what they
 * measure. `E2E_GROUP=beside` leaves them out, `E2E_GROUP=alone` runs only them; unset, a
 * config runs every suite it has.
 */
const ALONE = [
  'metrics',
  'multi-process',
  'reliability-concurrency',
  'reliability-database',
  'reliability-http',
  'reliability-load',
  'reliability-rate-limit',
  'reliability-readonly',
  'replication',
  'start-demo',
  'start-demo-embedded',
  'swagger-ui',
];

const pattern = (names) => `/test/(${names.join('|')})\\.e2e-spec\\.ts$`;

/** The Jest options that select `process.env.E2E_GROUP`'s suites, beside `ignored` ones. */
function suiteGroup(ignored = []) {
  const group = process.env.E2E_GROUP || undefined;
  if (group !== undefined && group !== 'alone' && group !== 'beside')
    throw new Error(`E2E_GROUP must be "alone" or "beside", not ${JSON.stringify(group)}`);
  const ignore = ['/node_modules/', ...ignored.map((s) => pattern([s]))];
  if (group === 'beside') ignore.push(pattern(ALONE));
  return {
    testPathIgnorePatterns: ignore,
    ...(group === 'alone' ? { testRegex: pattern(ALONE) } : {}),
  };
}

module.exports = { ALONE, suiteGroup };
