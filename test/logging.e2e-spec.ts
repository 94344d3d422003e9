import { randomBytes } from 'node:crypto';
import { ApiProcess, TestEnv } from './support/test-env';

interface LogLine {
  level: string;
  time: string;
  msg: string;
  request_id?: string;
  method?: string;
  route?: string | null;
  url?: string;
  status?: number;
  duration_ms?: number;
  key_id?: number | null;
  site_id?: number | null;
  context?: string;
}

describe('Structured request logs of the built API (nestjs-pino)', () => {
  let env: TestEnv;
  let api: ApiProcess;
  let site: number;
  let valid: { id: number; key: string };
  let revoked: { id: number; key: string };
  const unknown = `sk_${randomBytes(32).toString('base64url')}`;
  const malformed = `sk_${randomBytes(8).toString('hex')}`;
  let lines: LogLine[];
  let rawOutput: string;

  const call = (path: string, headers: Record<string, string>) =>
    fetch(`${api.url}${path}`, { headers }).then(async (res) => {
      await res.arrayBuffer();
      return res;
    });

  beforeAll(async () => {
    env = await TestEnv.create();
    const user = await env.user();
    site = await env.site({ members: [user] });
    valid = await env.key(user);
    revoked = await env.key(user, { revoked: true });
    api = await env.spawnApi({ LOG_LEVEL: 'info' });

    await call(`/api/v1/sites/${site}/analytics/realtime`, {
      Authorization: `Bearer ${valid.key}`,
      'X-Request-Id': 'req-valid-1',
    });
    await call('/api/v1/sites', { Authorization: `Bearer ${valid.key}`, 'X-Request-Id': 'req-valid-2' });
    await call('/api/v1/sites', { Authorization: `Bearer ${unknown}`, 'X-Request-Id': 'req-unknown' });
    await call('/api/v1/sites', { Authorization: `Bearer ${revoked.key}`, 'X-Request-Id': 'req-revoked' });
    await call('/api/v1/sites', { Authorization: `Bearer ${malformed}`, 'X-Request-Id': 'req-malformed' });
    await call('/api/v1/sites', { Authorization: `Basic ${valid.key}`, 'X-Request-Id': 'req-basic' });
    await call(`/api/v1/sites/${site}/events?limit=0`, {
      Authorization: `Bearer ${valid.key}`,
      'X-Request-Id': 'req-invalid-param',
    });
    await call('/api/v1/sites', {});
    // Keys where they do not belong: in the query string (any parameter name, plain or
    // percent-encoded), in the path, in the request id and in other headers.
    await call(`/api/v1/sites?api_key=${valid.key}`, { 'X-Request-Id': 'req-key-in-query' });
    await call(`/api/v1/sites/${site}/events?x=1&token=${encodeURIComponent(unknown).replace('_', '%5F')}`, {
      Authorization: `Bearer ${valid.key}`,
      'X-Request-Id': 'req-key-encoded',
    });
    await call(`/api/v1/${revoked.key}`, {
      Authorization: `Bearer ${valid.key}`,
      'X-Request-Id': 'req-key-in-path',
    });
    await call('/api/v1/sites', { 'X-Request-Id': valid.key, 'X-Api-Key': valid.key });
    expect(await api.stop('SIGTERM')).toBe(0);
    rawOutput = [...api.stdout, ...api.stderr].join('\n');
    lines = api.stdout.filter((l) => l.trim()).map((l) => JSON.parse(l) as LogLine);
  });

  afterAll(async () => {
    await api?.stop('SIGKILL');
    await env.close();
  });

  const byRequest = (id: string) => lines.filter((l) => l.request_id === id);

  it('writes only JSON lines on stdout and nothing on stderr', () => {
    expect(lines.length).toBeGreaterThan(8);
    expect(api.stderr.filter((l) => l.trim())).toEqual([]);
    for (const l of lines)
      expect(l).toEqual(
        expect.objectContaining({
          level: expect.any(String),
          time: expect.any(String),
          msg: expect.any(String),
        }),
      );
  });

  it('logs one line per request: id, method, route template, status, duration, key id, site id', () => {
    expect(byRequest('req-valid-1')).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'GET',
        route: '/api/v1/sites/:id/analytics/realtime',
        url: `/api/v1/sites/${site}/analytics/realtime`,
        status: 200,
        duration_ms: expect.any(Number),
        key_id: valid.id,
        site_id: site,
        msg: 'GET /api/v1/sites/:id/analytics/realtime 200',
      }),
    ]);
    expect(byRequest('req-valid-2')).toEqual([
      expect.objectContaining({ route: '/api/v1/sites', status: 200, key_id: valid.id, site_id: null }),
    ]);
    expect(byRequest('req-invalid-param')).toEqual([
      expect.objectContaining({
        route: '/api/v1/sites/:id/events',
        status: 400,
        key_id: valid.id,
        site_id: site,
      }),
    ]);
    for (const id of ['req-unknown', 'req-revoked', 'req-malformed', 'req-basic'])
      expect(byRequest(id)).toEqual([expect.objectContaining({ status: 401, key_id: null, site_id: null })]);
  });

  it('generates a request id when the client sends none', () => {
    const anonymous = lines.filter((l) => l.status === 401 && !l.request_id?.startsWith('req-'));
    // The request without an id, and the one whose id was a key (refused as an id).
    expect(anonymous).toHaveLength(2);
    expect(anonymous[0].request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('redacts anything shaped like a key from the logged URL and message, whatever the parameter', () => {
    expect(byRequest('req-key-in-query')).toEqual([
      expect.objectContaining({ status: 401, url: '/api/v1/sites?api_key=sk_[redacted]' }),
    ]);
    expect(byRequest('req-key-encoded')).toEqual([
      expect.objectContaining({ url: `/api/v1/sites/${site}/events?x=1&token=sk_[redacted]` }),
    ]);
    expect(byRequest('req-key-in-path')).toEqual([
      expect.objectContaining({
        status: 404,
        url: '/api/v1/sk_[redacted]',
        msg: 'GET /api/v1/sk_[redacted] 404',
      }),
    ]);
    // A key sent as the request id is not taken as one: the request gets a new id.
    const keyAsId = lines.filter(
      (l) => l.status === 401 && l.url === '/api/v1/sites' && l.request_id !== 'req-malformed',
    );
    expect(keyAsId.map((l) => l.request_id)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^[0-9a-f-]{36}$/)]),
    );
  });

  it('never logs a key or an Authorization header, valid or not', () => {
    for (const secret of [valid.key, revoked.key, unknown, malformed]) {
      expect(rawOutput).not.toContain(secret);
      expect(rawOutput).not.toContain(secret.slice(3, 30));
    }
    expect(rawOutput).not.toMatch(/Bearer|Basic |authorization/i);
  });

  it('logs the address it really listens on', () => {
    // startApiProcess listens on 127.0.0.1; the default 0.0.0.0 is checked below.
    expect(lines.map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^listening on http:\/\/127\.0\.0\.1:\d+ /),
    );
  });

  it('writes human-readable lines with LOG_FORMAT=pretty, and names 0.0.0.0 as all interfaces', async () => {
    const pretty = await env.spawnApi({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty', HOST: '0.0.0.0' });
    const res = await fetch(`${pretty.url}/api/v1/sites/${site}/analytics/realtime`, {
      headers: { Authorization: `Bearer ${valid.key}` },
    });
    await res.arrayBuffer();
    expect(await pretty.stop('SIGTERM')).toBe(0);
    const output = pretty.stdout.filter((l) => l.trim());
    expect(output.length).toBeGreaterThan(0);
    expect(output.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(output).toContainEqual(
      expect.stringMatching(/GET \/api\/v1\/sites\/:id\/analytics\/realtime 200/),
    );
    expect(output).toContainEqual(
      expect.stringMatching(/INFO: listening on http:\/\/0\.0\.0\.0:\d+ \(all interfaces\)/),
    );
  });
});
