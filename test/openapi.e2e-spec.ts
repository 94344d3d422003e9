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
          '400',
          '401',
          '405',
          '429',
          '503',
          ...(route.includes('{id}') ? ['403', '404'] : []),
        ];
        expect(statuses).toEqual(expect.arrayContaining(expected));
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).flatMap((m) => Object.keys(m)).length);
  });
});
