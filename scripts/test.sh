#!/usr/bin/env bash
# The README's test command (`npm test`): lint, unit tests, then the e2e suites against a real
# MariaDB (each suite in a fresh database of its own, dropped afterwards), then again on the
# embedded SQLite engine (each suite in a SQLite file of its own, test/jest-e2e.sqlite.config.js).
set -uo pipefail
cd "$(dirname "$0")/.."

[ -d node_modules ] || npm ci
bash scripts/ensure-mariadb.sh || exit 1
bash scripts/ensure-redis.sh || exit 1

results=$(mktemp -d)
status=0
npm run --silent lint || status=1
npx jest --config jest.config.js --json --outputFile="$results/unit.json" || status=1
npx jest --config test/jest-e2e.config.js --runInBand --json --outputFile="$results/e2e.json" || status=1
if node -e 'require("better-sqlite3")' 2>/dev/null; then
  TEST_ENGINE=sqlite npx jest --config test/jest-e2e.sqlite.config.js --runInBand --json \
    --outputFile="$results/e2e-sqlite.json" || status=1
else
  echo "test: better-sqlite3 could not be built here: the e2e suites did not run on SQLite" >&2
  status=1
fi

node -e '
  const fs = require("node:fs");
  let passed = 0, failed = 0;
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) { failed++; continue; }
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
  }
  console.log(`tests: ${passed} passed, ${failed} failed`);
' "$results/unit.json" "$results/e2e.json" "$results/e2e-sqlite.json"
rm -rf "$results"
exit $status
