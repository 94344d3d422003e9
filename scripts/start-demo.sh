#!/usr/bin/env bash
# One command from a fresh clone to a running API with live demo data: installs dependencies,
# uses the embedded SQLite engine unless DATABASE_URL (or DB_NAME) names a MariaDB/MySQL
# server (then makes sure MariaDB runs), creates and migrates the database (and on a server
# the API's read-only account),
# loads 90 days of demo data when it is empty, starts the API as that read-only account, and
# once it answers starts the live demo traffic (new visitors
# every few seconds, and the year before the 90 days filled in the background, for
# year-over-year comparisons) and prints a key and the addresses last.
#
#   npm run start:demo                 # live traffic on
#   npm run start:demo -- --no-live    # no live traffic (DEMO_LIVE=0 does the same); the
#                                      # year of history is still filled in
# Logs are human-readable on a terminal and JSON lines otherwise (LOG_FORMAT overrides).
set -euo pipefail
cd "$(dirname "$0")/.."

live="${DEMO_LIVE:-1}"
for arg in "$@"; do
  case "$arg" in
    --no-live) live=0 ;;
    --live) live=1 ;;
    *) echo "start:demo: unknown option $arg (use --no-live)" >&2; exit 2 ;;
  esac
done

export PORT="${PORT:-3000}"
if [ -z "${LOG_FORMAT:-}" ]; then
  if [ -t 1 ]; then export LOG_FORMAT=pretty; else export LOG_FORMAT=json; fi
fi

# No server named (DATABASE_URL or DB_NAME): the embedded SQLite engine, in SQLITE_PATH
# (data/stats.sqlite by default), which needs no database server at all. The API opens that
# file read-only.
if [ -z "${DATABASE_URL:-}" ] && [ -z "${DB_NAME:-}" ]; then
  engine=sqlite
  export SQLITE_PATH="${SQLITE_PATH:-data/stats.sqlite}"
else
  engine=mysql
fi

# On MariaDB/MySQL the API runs as a read-only account of its own (it refuses a user that can
# write): unless API_DATABASE_URL names one, `<database>_api` with a fresh password, which
# `migrate` below creates (or resets) and grants SELECT on the tables the API reads.
if [ "$engine" = mysql ] && [ -n "${DATABASE_URL:-}" ] && [ -z "${API_DATABASE_URL:-}" ]; then
  API_DATABASE_URL=$(node -e '
    const u = new URL(process.argv[1]);
    u.username = `${u.pathname.slice(1)}_api`.slice(0, 32);
    u.password = require("node:crypto").randomBytes(18).toString("base64url");
    console.log(u.toString());
  ' "$DATABASE_URL")
  export API_DATABASE_URL
fi

started=$(date +%s)
[ -d node_modules ] || npm ci
if [ "$engine" = mysql ]; then
  bash scripts/ensure-mariadb.sh
elif ! node -e 'require("better-sqlite3")' 2>/dev/null; then
  echo "start:demo: the embedded SQLite engine needs the optional package better-sqlite3, which is not installed or could not be built on this machine; set DATABASE_URL to use MariaDB/MySQL" >&2
  exit 1
fi
# Build unless dist/ is newer than every source (a second start skips ~30 s).
built=dist/apps/api/apps/api/src/main.js
if [ ! -f "$built" ] || [ ! -f dist/apps/cli/apps/cli/src/main.js ] ||
  [ -n "$(find apps libs package-lock.json nest-cli.json -newer "$built" -name '*.ts' -o -newer "$built" -name '*.json' 2>/dev/null | head -1)" ]; then
  npm run build --silent
fi
node scripts/cli.js migrate >&2
demo=$(node scripts/cli.js demo --json)
key=$(node -e 'console.log(JSON.parse(process.argv[1]).key)' "$demo")

node --max-old-space-size=1024 dist/apps/api/apps/api/src/main.js &  # the flags of `npm start`
api=$!
traffic=""
stop() {
  [ -n "$traffic" ] && kill -TERM "$traffic" 2>/dev/null || true
  kill -TERM "$api" 2>/dev/null || true
}
trap stop INT TERM

# Wait until the API answers (at most 60 s).
if ! node -e '
  const url = `http://127.0.0.1:${process.env.PORT}/health/live`;
  const until = Date.now() + 60_000;
  (async () => {
    while (Date.now() < until) {
      try { if ((await fetch(url)).ok) process.exit(0); } catch {}
      await new Promise((r) => setTimeout(r, 250));
    }
    process.exit(1);
  })();
'; then
  echo "start:demo: the API did not answer on port ${PORT} within 60 s" >&2
  stop
  wait "$api" || true
  exit 1
fi

# The demo's 90 days are loaded; demo:live fills in the year before them (once) and, unless
# --no-live, keeps new visitors coming. Its own output goes to stderr, away from the banner.
rate=6
[ "$live" = 1 ] || rate=0
node scripts/cli.js demo:live --history-days 400 --rate "$rate" >/dev/null &
traffic=$!

ready=$(( $(date +%s) - started ))
if [ "$live" = 1 ]; then
  live_line="Live traffic: a few visitors a minute (realtime moves); stop with Ctrl-C, or start with --no-live"
else
  live_line="Live traffic: off (--no-live)"
fi
cat <<MSG

  Statistics API with demo data — ready in ${ready} s
  Swagger UI:  http://localhost:${PORT}/api/docs
  API key:     ${key}
  Try:         curl -H "Authorization: Bearer ${key}" http://localhost:${PORT}/api/v1/sites
  ${live_line}
  History:     90 days, and the year before them for compare=year_over_year (on the first
               start it loads in the background: about a minute)

MSG

# Runs until the API stops (Ctrl-C stops both).
set +e
wait "$api"
status=$?
stop
wait
exit "$status"
