import type { INestApplication } from '@nestjs/common';
import { connect } from 'node:net';
import request from 'supertest';
import { ApiProcess, describeOnServer, TestEnv } from './support/test-env';

/** Sends raw bytes and returns the raw response (for what no HTTP client would send). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(out));
  });
}

describe('HTTP hardening: security headers, CORS, request targets, request ids', () => {
  let env: TestEnv;
  let app: INestApplication;
  let key: string;
  let site: number;

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    key = (await env.key(user)).key;
    app = await env.startApp();
  });

  afterAll(() => env.close());

  const get = (url: string) => request(app.getHttpServer()).get(url).set('Authorization', `Bearer ${key}`);

  it('sends helmet security headers and hides the framework', async () => {
    const res = await get('/api/v1/sites');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': expect.stringContaining('max-age='),
    });
    expect(res.headers).not.toHaveProperty('x-powered-by');
  });

  it('serves Swagger UI under a CSP it works with: scripts and styles from its own origin only', async () => {
    const ui = await request(app.getHttpServer()).get('/api/docs/');
    expect(ui.status).toBe(200);
    const csp = ui.headers['content-security-policy'];
    const directive = (name: string) =>
      csp
        .split(';')
        .find((d) => d.trim().startsWith(`${name} `))
        ?.trim();
    expect(directive('script-src')).toBe("script-src 'self'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    // Every script the page loads is an external, same-origin file, which script-src 'self' allows.
    const scripts = [...ui.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toMatch(/src="\.\/[^"]+"/);
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui-init.js', 'swagger-ui.css']) {
      expect((await request(app.getHttpServer()).get(`/api/docs/${asset}`)).status).toBe(200);
    }
  });

  it('has CORS off by default: no Access-Control-* headers, and a preflight is a 405', async () => {
    const res = await get('/api/v1/sites').set('Origin', 'https://dashboard.example');
    expect(res.status).toBe(200);
    expect(res.headers).not.toHaveProperty('access-control-allow-origin');
    const preflight = await request(app.getHttpServer())
      .options('/api/v1/sites')
      .set('Origin', 'https://dashboard.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(405);
  });

  it('allows the origins in CORS_ORIGINS, for GET and HEAD, exposing the rate-limit headers', async () => {
    const corsEnv = await TestEnv.create();
    try {
      const user = await corsEnv.user();
      const corsKey = (await corsEnv.key(user)).key;
      const corsApp = await corsEnv.startApp({
        CORS_ORIGINS: 'https://dashboard.example, https://ops.example',
      });
      const preflight = await request(corsApp.getHttpServer())
        .options('/api/v1/sites')
        .set('Origin', 'https://ops.example')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://ops.example');
      expect(preflight.headers['access-control-allow-methods']).toBe('GET,HEAD');
      expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
      const res = await request(corsApp.getHttpServer())
        .get('/api/v1/sites')
        .set('Origin', 'https://dashboard.example')
        .set('Authorization', `Bearer ${corsKey}`);
      expect(res.headers['access-control-allow-origin']).toBe('https://dashboard.example');
      expect(res.headers['access-control-expose-headers']).toMatch(/RateLimit-Remaining/);
      const other = await request(corsApp.getHttpServer())
        .get('/api/v1/sites')
        .set('Origin', 'https://evil.example')
        .set('Authorization', `Bearer ${corsKey}`);
      expect(other.headers).not.toHaveProperty('access-control-allow-origin');
    } finally {
      await corsEnv.close();
    }
  });

  it('answers a request target over MAX_URL_BYTES (8 KB) with a 414 problem', async () => {
    const long = `/api/v1/sites/${site}/events?from=${'9'.repeat(9000)}`;
    const res = await get(long);
    expect(res.status).toBe(414);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 414, title: 'URI Too Long' });
    const atLimit = await get(`/api/v1/sites?x=${'a'.repeat(8192 - '/api/v1/sites?x='.length)}`);
    expect(atLimit.status).toBe(400);
  });

  it.each([
    ['/api/v1/sites/%E0%A4%A/events', 'path'],
    ['/api/v1/%', 'path'],
    ['/api/v1/sites?limit=%ZZ', 'limit'],
    ['/api/v1/sites?%E0=1', '%E0'],
  ])('answers a malformed percent-encoding in %s with a problem 400 naming %s', async (url, parameter) => {
    const res = await get(url);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors).toEqual([{ parameter, message: expect.stringContaining('percent-encoding') }]);
  });

  it('answers what Node refuses before Express (oversized headers, not HTTP) with problem bodies', async () => {
    const server = await app.listen(0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    const huge = await raw(
      port,
      `GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(huge).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 431 });
    const garbage = await raw(port, 'HELLO THERE\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)).errors).toEqual([
      { parameter: 'request', message: expect.any(String) },
    ]);
  });

  it('answers an HTTP/1.1 request without a Host header with a problem 400 naming Host, with RateLimit-* under /api/v1', async () => {
    const server = app.getHttpServer() as import('node:http').Server;
    if (!server.listening) await app.listen(0, '127.0.0.1');
    const { port } = server.address() as { port: number };
    for (const path of ['/api/v1/sites', '/health/live']) {
      const answer = await raw(port, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).toMatch(/\r\nContent-Type: application\/problem\+json/i);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
      expect(body.errors).toEqual([
        { parameter: 'Host', message: 'an HTTP/1.1 request must carry a Host header' },
      ]);
      if (path.startsWith('/api/v1')) expect(answer).toMatch(/\r\nRateLimit-Limit: \d+/i);
    }
    // HTTP/1.0 does not require one.
    expect(await raw(port, 'GET /health/live HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('echoes a sane X-Request-Id, replaces an unsafe one, and makes one up when there is none', async () => {
    expect((await get('/api/v1/sites').set('X-Request-Id', 'trace-42.a:b')).headers['x-request-id']).toBe(
      'trace-42.a:b',
    );
    const unsafe = await get('/api/v1/sites').set('X-Request-Id', `x${'y'.repeat(300)}`);
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await request(app.getHttpServer()).get('/api/v1/sites');
    expect(none.status).toBe(401);
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stores no key anywhere in the database, only its hash', async () => {
    const user = await env.cli(['users:create', '--email', 'dump@test.example', '--json']);
    const created = await env.cli(['keys:create', '--user', String(user.json!.id), '--json']);
    const secret = created.json!.key as string;
    let dump = '';
    for (const name of await env.tableNames())
      dump += JSON.stringify(await env.ds.query(`SELECT * FROM \`${name}\``));
    expect(dump).toContain(String(created.json!.id));
    for (const part of [secret, secret.slice(3), secret.slice(10, 40)]) expect(dump).not.toContain(part);
  });
});

// Holds a request with LOCK TABLES from another session; SQLite readers (WAL) are never held by a lock.
describeOnServer('Graceful shutdown of the built API on SIGTERM', () => {
  let env: TestEnv;
  let key: string;
  let api: ApiProcess | undefined;

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    await env.site({ members: [user] });
    key = (await env.key(user)).key;
  });

  afterEach(async () => {
    await api?.stop('SIGKILL');
    await env.ds.query('UNLOCK TABLES');
  });

  afterAll(() => env.close());

  /** A request held in flight: the key lookup waits on a table lock until `release()`. */
  async function heldRequest(url: string) {
    const lock = env.ds.createQueryRunner();
    await lock.connect();
    await lock.query('LOCK TABLES api_keys WRITE');
    const started = Date.now();
    const response = fetch(`${url}/api/v1/sites`, { headers: { Authorization: `Bearer ${key}` } }).then(
      async (res) => ({
        status: res.status,
        body: (await res.json()) as { data?: unknown[] },
        ms: Date.now() - started,
      }),
    );
    // Handled here too: when the process is made to exit, the request fails before anyone awaits it.
    response.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    return {
      response,
      release: async () => {
        await lock.query('UNLOCK TABLES');
        await lock.release();
      },
    };
  }

  it('stops accepting, finishes the request in flight with a 200, closes the pool and exits 0', async () => {
    api = await env.spawnApi();
    const held = await heldRequest(api.url);
    api.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // No new connections while draining.
    await expect(fetch(`${api.url}/health/live`)).rejects.toThrow();
    expect(api.child.exitCode).toBeNull();
    await held.release();
    const res = await held.response;
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(await api.exited).toBe(0);
    const messages = api.stdout
      .filter((l) => l.includes('"context":"Shutdown"'))
      .map((l) => JSON.parse(l).msg);
    expect(messages).toEqual([expect.stringMatching(/^SIGTERM: refusing new connections/), 'stopped']);
  });

  it('gives up on requests still running after SHUTDOWN_TIMEOUT_MS and exits 1', async () => {
    api = await env.spawnApi({ SHUTDOWN_TIMEOUT_MS: '500' });
    const held = await heldRequest(api.url);
    const signalled = Date.now();
    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(1);
    expect(Date.now() - signalled).toBeLessThan(3000);
    await held.release();
    await expect(held.response).rejects.toThrow();
  });
});
