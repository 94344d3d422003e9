import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

export const DOCS_PATH = 'api/docs';

export function buildOpenApiDocument(app: INestApplication) {
  const config = new DocumentBuilder()
    .setTitle('Statistics API')
    .setDescription(
      'Read-only API over a web-analytics product: sites, traffic, engagement, realtime, funnels, ' +
        'registered events, conversions and e-commerce. Every request carries `Authorization: Bearer <key>`. ' +
        'Errors are RFC 9457 problem details (`application/problem+json`).',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key, `sk_…`' })
    .build();
  return SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controllerKey: string, methodKey: string) => methodKey,
  });
}

/**
 * What main.ts and the e2e tests both apply to the application instance: the parts that
 * cannot live in a module (documentation, shutdown hooks, proxy settings).
 */
export function configureApp(app: INestApplication): INestApplication {
  app.enableShutdownHooks();
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup(DOCS_PATH, app, document, {
    jsonDocumentUrl: 'api/docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
  return app;
}
