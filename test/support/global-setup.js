/** Builds the CLI once (the e2e suites run it as a real process) and checks the database is reachable. */
const { execSync } = require('node:child_process');
const path = require('node:path');

module.exports = async () => {
  const root = path.join(__dirname, '../..');
  execSync('npx nest build cli', { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
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
};
