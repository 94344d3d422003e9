import { AppConfig } from '@app/config';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AppModule } from '../apps/api/src/app.module';
import { RealtimeService } from '../apps/api/src/analytics/realtime.service';
import { configureApp } from '../apps/api/src/configure-app';
import {
  checkOrThrow,
  checkRecordedResponses,
  contractProblemsOf,
  openApiContract,
} from './support/contract-check';
import { OpenApiContract, RecordedResponse } from './support/openapi-contract';
import { TestEnv } from './support/test-env';

/**
 * The contract check that runs after every e2e test (test/support/contract-setup.ts) must
 * catch a response that openapi.json does not allow. First on hand-made responses, then on a
 * real app whose realtime report is made to answer a wrong body.
 */
describe('the OpenAPI contract check of every e2e response', () => {
  const contract = openApiContract();
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'ratelimit-limit': '600',
    'ratelimit-remaining': '599',
    'ratelimit-reset': '60',
    'ratelimit-policy': '600;w=60',
    'x-request-id': 'test-1',
    'cache-control': 'private, max-age=0, must-revalidate',
    etag: 'W/"2a-abc"',
  };
  const engagement = (returning: unknown): RecordedResponse => ({
    method: 'GET',
    url: '/api/v1/sites/3/analytics/engagement?from=2026-01-01&to=2026-01-31',
    status: 200,
    headers,
    body: JSON.stringify({
      data: {
        pages_per_session: 1.5,
        avg_time_on_page_seconds: 30,
        scroll_depth: [{ bucket: '0-24', pageviews: 1, share: 100 }],
        returning_visitors: returning,
      },
      meta: {
        site_id: 3,
        from: '2026-01-01',
        to: '2026-01-31',
        timezone: 'UTC',
        tracking_mode: 'cookieless',
        filters: [],
      },
    }),
  });

  it('accepts a cookieless engagement report (returning_visitors: null) and a full one', () => {
    expect(contract.check(engagement(null))).toEqual([]);
    expect(
      contract.check(engagement({ new_visitors: 2, returning_visitors: 1, returning_share: 33.33 })),
    ).toEqual([]);
  });

  it('rejects a wrong body, an undocumented status, media type or header, and a missing required header', () => {
    expect(contract.check(engagement('none')).join('\n')).toMatch(/body/);
    expect(contract.check(engagement({ new_visitors: 'two' })).join('\n')).toMatch(/body/);
    expect(contract.check({ ...engagement(null), status: 418 })).toEqual([
      expect.stringMatching(/status 418 is not documented/),
    ]);
    const xml = { ...engagement(null), headers: { ...headers, 'content-type': 'application/xml' } };
    expect(contract.check(xml)).toEqual([
      expect.stringMatching(/Content-Type "application\/xml" is not documented/),
    ]);
    const withoutEtag: Record<string, string> = { ...headers };
    delete withoutEtag.etag;
    expect(contract.check({ ...engagement(null), headers: withoutEtag }).join('\n')).toMatch(
      /headers.*etag/i,
    );
    const allow = { ...engagement(null), headers: { ...headers, allow: 'GET, HEAD' } };
    expect(contract.check(allow)).toEqual([expect.stringMatching(/header allow is sent but not documented/)]);
  });

  it("rejects null where @nestjs/swagger's own nullable $ref stood (the schema openapi.json fixes)", () => {
    const doc = JSON.parse(JSON.stringify((contract as unknown as { doc: object }).doc)) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    doc.components.schemas.EngagementDataDto.properties.returning_visitors = {
      nullable: true,
      type: 'object',
      allOf: [{ $ref: '#/components/schemas/ReturningVisitorsDto' }],
    };
    const strict = new OpenApiContract(doc as never);
    expect(strict.check(engagement(null)).join('\n')).toMatch(/body/);
  });

  describe('on a running app', () => {
    let env: TestEnv;
    let app: INestApplication;
    let key: string;
    let site: number;

    beforeAll(async () => {
      env = await TestEnv.create();
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .overrideProvider(AppConfig)
        .useValue(env.config())
        .overrideProvider(RealtimeService)
        .useValue({ report: () => Promise.resolve({ data: { active_visitors: 'many' }, meta: {} }) })
        .compile();
      app = moduleRef.createNestApplication({ logger: ['error'], bodyParser: false });
      configureApp(app);
      await app.init();
      const user = await env.user();
      site = await env.site({ members: [user] });
      key = (await env.key(user)).key;
    });

    afterAll(async () => {
      await app.close();
      await env.close();
    });

    it('fails on a wrong body the app serves, and passes a right one', async () => {
      const wrong = await contractProblemsOf(() =>
        request(app.getHttpServer())
          .get(`/api/v1/sites/${site}/analytics/realtime`)
          .set('Authorization', `Bearer ${key}`)
          .expect(200),
      );
      expect(wrong.length).toBeGreaterThan(0);
      expect(wrong.join('\n')).toMatch(/GET \/api\/v1\/sites\/\d+\/analytics\/realtime → 200: body/);

      const right = await contractProblemsOf(() =>
        request(app.getHttpServer())
          .get(`/api/v1/sites/${site}/analytics/engagement`)
          .set('Authorization', `Bearer ${key}`)
          .expect(200),
      );
      expect(right).toEqual([]);
    });

    it('also checks the responses of the API processes a suite spawns', async () => {
      checkOrThrow();
      const api = await env.spawnApi();
      try {
        const res = await fetch(`${api.url}/api/v1/sites`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status).toBe(200);
        await res.text();
      } finally {
        await api.stop();
      }
      const { checked, problems } = checkRecordedResponses();
      expect(problems).toEqual([]);
      expect(checked).toBeGreaterThanOrEqual(1);
    });
  });
});
