/** Builds the CLI (the e2e suites run it as a real process) and checks the database is reachable. */
const { execSync } = require('node:child_process');
const { existsSync, mkdtempSync, readdirSync, statSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '../..');
const CLI_ENTRY = path.join(root, 'dist/apps/cli/apps/cli/src/main.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts'))
      newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * CI always builds, unless scripts/test.sh has just built dist/ for every run it starts
 * (E2E_DIST_BUILT=1: two of them run at once). Locally the build is skipped when it is newer
 * than every source: nest build deletes dist/apps/cli first, which breaks CLI calls of a test
 * run going on beside.
 */
function cliIsCurrent() {
  if (process.env.E2E_DIST_BUILT === '1' && existsSync(CLI_ENTRY)) return true;
  if (process.env.CI || !existsSync(CLI_ENTRY)) return false;
  const built = statSync(CLI_ENTRY).mtimeMs;
  return ['apps/cli/src', 'libs'].every((dir) => newestSource(path.join(root, dir)) < built);
}

/**
 * Every response served during the run is recorded for the OpenAPI contract check
 * (contract-setup.ts): in this process by the setup file, in every API process a suite
 * spawns through NODE_OPTIONS, which child processes inherit.
 */
function recordResponses() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stats-api-responses-'));
  process.env.RESPONSE_RECORD_DIR = dir;
  const preload = path.join(__dirname, 'response-recorder-preload.js');
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`.trim();
}

module.exports = async () => {
  if (!cliIsCurrent()) execSync('npx nest build cli', { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const mysql = require('mysql2/promise');
  const url = new URL(process.env.TEST_DATABASE_URL || 'mysql://root@127.0.0.1:3306/test');
  try {
    const conn = await mysql.createConnection({
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username || 'root'),
      password: decodeURIComponent(url.password),
      connectTimeout: 5000,
    });
    await conn.end();
  } catch (e) {
    throw new Error(
      `e2e tests need MariaDB/MySQL at ${url.host} (set TEST_DATABASE_URL, or run \`npm run db:ensure\`): ${e.message}`,
    );
  }
  recordResponses();
};
