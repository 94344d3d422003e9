#!/usr/bin/env bash
# One command from a fresh clone to a running API with demo data: installs dependencies,
# makes sure MariaDB runs, creates and migrates the database, loads demo data when it is
# empty, prints a key and the Swagger UI address, then runs the API in the foreground.
set -euo pipefail
cd "$(dirname "$0")/.."

export DATABASE_URL="${DATABASE_URL:-mysql://root@127.0.0.1:3306/stats}"
export PORT="${PORT:-3000}"

[ -d node_modules ] || npm ci
DATABASE_URL="$DATABASE_URL" bash scripts/ensure-mariadb.sh
npm run build --silent
node scripts/cli.js migrate
demo=$(node scripts/cli.js demo --json)
key=$(node -e 'console.log(JSON.parse(process.argv[1]).key)' "$demo")

cat <<MSG

  Statistics API with demo data
  Swagger UI:  http://localhost:${PORT}/api/docs
  API key:     ${key}
  Try:         curl -H "Authorization: Bearer ${key}" http://localhost:${PORT}/api/v1/sites

MSG
exec node dist/apps/api/apps/api/src/main.js
