#!/usr/bin/env bash
# The README's test command (`npm test`): lint, unit tests, then the e2e suites against a real
# MariaDB (each suite in a fresh database of its own, dropped afterwards) and on the embedded
# SQLite engine (each suite in a SQLite file of its own, test/jest-e2e.sqlite.config.js).
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
# One build for every e2e run below: two of them run at once, and neither may rebuild dist/
# under the other (nest build deletes its output first).
npm run --silent build >/dev/null || status=1
export E2E_DIST_BUILT=1
phase build
# The suites of both engines side by side (two Jest runs, each suite in turn), then the suites
# that time, load or start process trees, alone (test/support/suite-groups.js). The SQLite
# run's lines are prefixed with "sqlite |".
sqlite=1
node -e 'require("better-sqlite3")' 2>/dev/null || sqlite=0
if [ $sqlite = 1 ]; then
  (
    E2E_GROUP=beside TEST_ENGINE=sqlite npx jest --config test/jest-e2e.sqlite.config.js --runInBand --json \
      --outputFile="$results/e2e-sqlite.json" 2>&1
    echo $? >"$results/e2e-sqlite.rc"
  ) | sed -u 's/^/sqlite | /' &
  beside=$!
fi
E2E_GROUP=beside npx jest --config test/jest-e2e.config.js --runInBand --json \
  --outputFile="$results/e2e.json" || status=1
if [ $sqlite = 1 ]; then
  wait $beside
  [ "$(cat "$results/e2e-sqlite.rc" 2>/dev/null)" = 0 ] || status=1
fi
phase "e2e suites on MariaDB and SQLite side by side"
E2E_GROUP=alone npx jest --config test/jest-e2e.config.js --runInBand --json \
  --outputFile="$results/e2e-alone.json" || status=1
if [ $sqlite = 1 ]; then
  E2E_GROUP=alone TEST_ENGINE=sqlite npx jest --config test/jest-e2e.sqlite.config.js --runInBand --json \
    --outputFile="$results/e2e-sqlite-alone.json" || status=1
else
  echo "test: better-sqlite3 could not be built here: the e2e suites did not run on SQLite" >&2
  status=1
fi
phase "e2e suites that run alone"

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
' "$results/unit.json" "$results/e2e.json" "$results/e2e-sqlite.json" "$results/e2e-alone.json" \
  "$results/e2e-sqlite-alone.json"
rm -rf "$results"
exit $status
