import 'reflect-metadata';
import { ConfigError, loadConfig } from '@app/config';
import {
  EmbeddedEngineUnavailableError,
  embeddedEngineLine,
  isMissingSchemaError,
  loadBetterSqlite3,
} from '@app/db';
import { CommandFactory } from 'nest-commander';
import { CliModule, CliProgram } from './cli.module';
import { CliError, Output } from './output';

/** The name in `Usage:` lines: the package's bin, whichever way the CLI was started. */
export const CLI_NAME = 'stats-cli';
const JSON_HELP = 'print exactly one JSON object on stdout and nothing else there (errors: {"error": "…"})';

async function main(): Promise<void> {
  // --json is global: every command prints exactly one JSON object on stdout with it.
  const json = process.argv.includes('--json');
  process.argv = process.argv.filter((a) => a !== '--json');
  const out = new Output();
  out.json = json;

  const fail = (error: unknown) => {
    if (isMissingSchemaError(error)) {
      // A command run before the first `migrate`: say what to do, not only what is missing.
      out.error(`${(error as Error).message}: run \`${CLI_NAME} migrate\` first`);
    } else out.error(error instanceof ConfigError ? error.message : error);
    process.exitCode = error instanceof CliError ? error.exitCode : 1;
  };
  const args = process.argv.slice(2);
  const wantsHelp = args.length === 0 || args.includes('--help') || args.includes('-h') || args[0] === 'help';
  if (wantsHelp && !process.env.DATABASE_URL && !process.env.DB_NAME && !process.env.SQLITE_PATH) {
    // Help needs no database, but the modules that declare the commands read the settings:
    // give them a placeholder that nothing connects to.
    process.env.DATABASE_URL = 'mysql://help@127.0.0.1:3306/help';
  }
  try {
    const config = loadConfig();
    if (config.embedded && !wantsHelp) {
      loadBetterSqlite3();
      process.stderr.write(`${embeddedEngineLine(config.embedded.path)}\n`);
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof EmbeddedEngineUnavailableError) return fail(e);
    throw e;
  }

  const app = await CommandFactory.createWithoutRunning(CliModule, {
    logger: ['error', 'warn'],
    cliName: CLI_NAME,
    errorHandler: (err) => {
      // commander's own errors (unknown command, missing option) and --help/--version exits
      const code = (err as { code?: string; exitCode?: number }).code;
      if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') {
        process.exitCode = 0;
        return;
      }
      if (json) process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
      process.exitCode = (err as { exitCode?: number }).exitCode || 1;
    },
    serviceErrorHandler: fail,
  });
  app.get(Output).json = json;
  // --json is taken out of argv above; declared here so that every help lists it.
  const program = app.get(CliProgram).commander;
  program.name(CLI_NAME).option('--json', JSON_HELP);
  for (const command of program.commands) command.option('--json', JSON_HELP);
  await CommandFactory.runApplication(app);
  await app.close();
}

void main();
