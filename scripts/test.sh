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
phase() { echo "test: $1 took $((SECONDS - started)) s"; started=$SECONDS; }
started=$SECONDS
npm run --silent lint || status=1
phase lint
npx jest --config jest.config.js --json --outputFile="$results/unit.json" || status=1
phase "unit tests"
npx jest --config test/jest-e2e.config.js --runInBand --json --outputFile="$results/e2e.json" || status=1
phase "e2e suites on MariaDB"
if node -e 'require("better-sqlite3")' 2>/dev/null; then
  TEST_ENGINE=sqlite npx jest --config test/jest-e2e.sqlite.config.js --runInBand --json \
    --outputFile="$results/e2e-sqlite.json" || status=1
  phase "e2e suites on SQLite"
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
  const suites = [];
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) continue;
    const run = f.replace(/^.*\/(.*)\.json$/, "$1");
    for (const t of JSON.parse(fs.readFileSync(f, "utf8")).testResults)
      suites.push([t.endTime - t.startTime, `${run} ${t.name.replace(/^.*\/(test|apps|libs)\//, "$1/")}`]);
  }
  suites.sort((a, b) => b[0] - a[0]);
  console.log("slowest suites (s):");
  for (const [ms, name] of suites.slice(0, 12)) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)}  ${name}`);
  console.log(`tests: ${passed} passed, ${failed} failed`);
' "$results/unit.json" "$results/e2e.json" "$results/e2e-sqlite.json"
rm -rf "$results"
exit $status
