import type { INestApplication } from '@nestjs/common';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../apps/api/src/openapi';
import { TestEnv } from './support/test-env';

const COMMITTED = path.join(__dirname, '..', 'openapi.json');

/**
 * openapi.json is committed so that clients can be generated without running the service.
 * This fails when it no longer matches what the API serves; `npm run openapi` rewrites it.
 */
describe('openapi.json', () => {
  let env: TestEnv;
  let app: INestApplication;

  beforeAll(async () => {
    env = await TestEnv.create();
    app = await env.startApp();
  });

  afterAll(() => env.close());

  it('matches the document the API serves (run `npm run openapi` after changing routes or DTOs)', () => {
    const served = JSON.parse(JSON.stringify(buildOpenApiDocument(app))) as object;
    if (process.env.UPDATE_OPENAPI === '1') writeFileSync(COMMITTED, `${JSON.stringify(served, null, 2)}\n`);
    expect(served).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));
  });

  it('has a stable operationId, a tag, a summary and every error response on every operation', () => {
    const doc = JSON.parse(readFileSync(COMMITTED, 'utf8')) as {
      paths: Record<
        string,
        Record<string, { operationId?: string; tags?: string[]; summary?: string; responses: object }>
      >;
    };
    const ids = new Set<string>();
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const op of Object.values(methods)) {
        expect({ route, id: op.operationId }).toEqual({
          route,
          id: expect.stringMatching(/^[a-z][A-Za-z]+$/),
        });
        ids.add(op.operationId!);
        expect(op.tags).toHaveLength(1);
        expect(op.summary).toBeTruthy();
        const statuses = Object.keys(op.responses);
        const expected = [
          '200',
          '304',
          '400',
          '401',
          '405',
          '406',
          '408',
          '414',
          '429',
          '431',
          '500',
          '503',
          ...(route.includes('{id}') ? ['403', '404'] : []),
        ];
        expect(statuses).toEqual(expect.arrayContaining(expected));
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).flatMap((m) => Object.keys(m)).length);
  });

  it('documents HEAD beside every GET, problem bodies on every GET error, and the headers a client relies on', () => {
    type Response = { content?: Record<string, unknown>; headers?: Record<string, unknown> };
    const doc = JSON.parse(readFileSync(COMMITTED, 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
      components: { headers: Record<string, unknown> };
    };
    for (const [route, methods] of Object.entries(doc.paths)) {
      expect({ route, methods: Object.keys(methods).sort() }).toEqual({ route, methods: ['get', 'head'] });
      const { get, head } = methods as Record<
        string,
        { responses: Record<string, Response>; parameters?: Array<{ in: string }> }
      >;
      // Path parameters (the site id) come first, before the query parameters.
      const order = (get.parameters ?? []).map((p) => p.in);
      expect(order).toEqual([...order].sort((a, b) => Number(a !== 'path') - Number(b !== 'path')));
      expect(Object.keys(head.responses)).toEqual(Object.keys(get.responses));
      for (const [status, response] of Object.entries(get.responses)) {
        if (Number(status) >= 400) {
          expect({ route, status, types: Object.keys(response.content ?? {}) }).toEqual({
            route,
            status,
            types: ['application/problem+json'],
          });
        }
        expect(head.responses[status].content).toBeUndefined();
        expect(head.responses[status].headers).toEqual(response.headers);
      }
      const headersOf = (status: string) => Object.keys(get.responses[status].headers ?? {});
      expect(headersOf('200')).toEqual(
        expect.arrayContaining(['RateLimit-Limit', 'ETag', 'Cache-Control', 'X-Request-Id']),
      );
      expect(headersOf('401')).toContain('WWW-Authenticate');
      expect(headersOf('405')).toContain('Allow');
      expect(headersOf('429')).toContain('Retry-After');
      expect(headersOf('503')).toContain('Retry-After');
    }
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      [
        'Allow',
        'Cache-Control',
        'Content-Disposition',
        'ETag',
        'RateLimit-Limit',
        'RateLimit-Policy',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'Retry-After',
        'WWW-Authenticate',
        'X-Request-Id',
      ].sort(),
    );
  });
});
