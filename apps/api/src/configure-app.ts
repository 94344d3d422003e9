import { AppConfig } from '@app/config';
import { leaveHostCheckToTheApp, problem, PROBLEM_CONTENT_TYPE, requestTargetMiddleware } from '@app/common';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import helmet from 'helmet';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Logger } from 'nestjs-pino';
import { requestIdMiddleware } from './observability/request-id';
import { buildOpenApiDocument } from './openapi';

export const DOCS_PATH = 'api/docs';

/**
 * Security headers. The CSP is helmet's default minus `upgrade-insecure-requests` (the API
 * may be served over plain HTTP on a private network): Swagger UI at /api/docs loads only
 * same-origin scripts and styles and uses inline styles and data: images, which the default
 * allows. The API's own responses are JSON, to which the CSP does not matter.
 */
export const securityHeaders = () =>
  helmet({
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
    // Swagger UI and JSON clients need no cross-origin isolation; CORS governs API access.
    crossOriginEmbedderPolicy: false,
  });

/**
 * Malformed requests that Node rejects before Express sees them (a request line or headers
 * over Node's 16 KB limit, bytes that are not HTTP) get a problem body rather than a bare
 * status line.
 */
function answerClientErrors(server: Server): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
    const status: number =
      error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify(
      status === 400
        ? problem(status, 'The request is not valid HTTP.', {
            errors: [{ parameter: 'request', message: 'the request is not valid HTTP' }],
          })
        : problem(status, 'The request was refused before it was read.'),
    );
    // A response to HEAD has no body; the method is in the bytes Node managed to read.
    const head = (error as { rawPacket?: Buffer }).rawPacket?.toString('latin1', 0, 5) === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${status} ${problem(status, '').title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  });
}

/**
 * What main.ts and the e2e tests both apply to the application instance: the parts that
 * cannot live in a module because they must run before Express matches a route (request id,
 * request-target checks, security headers, CORS), plus documentation and the logger.
 */
export function configureApp(app: INestApplication): INestApplication {
  const config = app.get(AppConfig);
  app.useLogger(app.get(Logger));
  const express = app as NestExpressApplication;
  express.set('trust proxy', config.http.trustProxy);
  express.disable('x-powered-by');
  app.use(requestIdMiddleware);
  app.use(requestTargetMiddleware({ maxUrlBytes: config.http.maxUrlBytes }));
  app.use(securityHeaders());
  if (config.http.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.http.corsOrigins.includes('*') ? '*' : config.http.corsOrigins,
      methods: ['GET', 'HEAD'],
      allowedHeaders: ['Authorization', 'X-Request-Id'],
      exposedHeaders: [
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'RateLimit-Policy',
        'Retry-After',
        'X-Request-Id',
      ],
      maxAge: 600,
    });
  }
  answerClientErrors(app.getHttpServer() as Server);
  leaveHostCheckToTheApp(app.getHttpServer() as Server);

  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: 'api/docs-json',
    // A pasted key lives only in the page's memory: persisted, it would sit in localStorage,
    // readable by any script of the origin and left behind on shared machines.
    swaggerOptions: { persistAuthorization: false },
  });
  return app;
}
