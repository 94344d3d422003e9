import { type INestApplication, Logger } from '@nestjs/common';

/**
 * SIGTERM/SIGINT: stop accepting connections, let in-flight requests finish, then close the
 * database pool and Redis (Nest's shutdown hooks run after the HTTP server has closed) and
 * exit 0. Requests still running after `timeoutMs` are abandoned: exit 1.
 *
 * Not Nest's enableShutdownHooks(): it re-raises the signal after closing, so the process
 * would end killed by SIGTERM rather than with exit code 0.
 */
export function exitGracefullyOnSignals(
  app: INestApplication,
  timeoutMs: number,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const logger = new Logger('Shutdown');
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: refusing new connections, finishing in-flight requests (at most ${timeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.error(`in-flight requests still running after ${timeoutMs} ms; exiting`);
      exit(1);
    }, timeoutMs);
    deadline.unref();
    app.close().then(
      () => {
        clearTimeout(deadline);
        logger.log('stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error(
          `shutdown failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
