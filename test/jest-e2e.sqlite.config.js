/**
 * The e2e suites again on the embedded SQLite engine (`TEST_ENGINE=sqlite`, set by
 * scripts/test.sh): every suite whose figures or behaviour depend on the database, with the
 * same expected numbers. Not run twice: what only a server has (replicas, accounts, locks
 * held by another session), and the HTTP layer's own suites, which
 * read the database only through the same services as the suites that do run.
 */
const base = require('./jest-e2e.config.js');
const { suiteGroup } = require('./support/suite-groups');

const SERVER_ONLY = ['replication', 'reliability-readonly', 'reliability-concurrency'];
const HTTP_LAYER = [
  'swagger-ui',
  'openapi',
  'openapi-contract',
  'example-client',
  'fuzz',
  'reliability-load',
  'reliability-rate-limit',
  'metrics',
  'multi-process',
];

module.exports = {
  ...base,
  ...suiteGroup([...SERVER_ONLY, ...HTTP_LAYER]),
};
