import 'reflect-metadata';
import { AppConfig, ConfigError, loadConfig } from '@app/config';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { exitGracefullyOnSignals } from './shutdown';

async function bootstrap(): Promise<void> {
  try {
    loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
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
  await app.listen(config.port, config.host);
  new Logger('Bootstrap').log(`listening on ${await app.getUrl()} — API docs at /api/docs`);
}

void bootstrap();
