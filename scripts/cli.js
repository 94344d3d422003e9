#!/usr/bin/env node
// Entry point of the operator CLI: runs the built CLI, building it first on a fresh checkout.
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const entry = path.join(root, 'dist/apps/cli/apps/cli/src/main.js');
if (!existsSync(entry)) {
  process.stderr.write('building the CLI (first run)…\n');
  execSync('npx nest build cli', { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}
require(entry);
