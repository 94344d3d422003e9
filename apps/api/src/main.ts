import 'reflect-metadata';
import { AppConfig, ConfigError, loadConfig } from '@app/config';
import { EmbeddedEngineUnavailableError, loadBetterSqlite3, PrivilegedDatabaseUserError } from '@app/db';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { exitGracefullyOnSignals } from './shutdown';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The address the server really listens on (0.0.0.0 stays 0.0.0.0: every interface). */
function listeningUrl(server: Server): string {
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const all = address === '0.0.0.0' || address === '::' ? ' (all interfaces)' : '';
  return `http://${host}:${port}${all}`;
}

async function bootstrap(): Promise<void> {
  try {
    // The embedded engine's package is optional: without it, one line instead of a stack.
    if (loadConfig().embedded) loadBetterSqlite3();
  } catch (e) {
    if (e instanceof ConfigError || e instanceof EmbeddedEngineUnavailableError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  // bufferLogs: boot messages wait for the JSON logger. No body parser: every route is a GET.
  const app = await NestFactory.create(AppModule, { bufferLogs: true, bodyParser: false });
  configureApp(app);
  const config = app.get(AppConfig);
  exitGracefullyOnSignals(app, config.http.shutdownTimeoutMs);
  try {
    await app.listen(config.port, config.host);
  } catch (e) {
    if (!(e instanceof PrivilegedDatabaseUserError)) throw e;
    process.stderr.write(`${e.message}\n`);
    await app.close().catch(() => undefined);
    process.exit(1);
  }
  new Logger('Bootstrap').log(
    `listening on ${listeningUrl(app.getHttpServer() as Server)} — API docs at /api/docs`,
  );
}

void bootstrap();
