import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  HeaderObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const DESCRIPTION = `
Read-only API over a web-analytics product: sites, traffic, engagement, realtime activity,
funnels, registered events, conversions and e-commerce. Custom dashboards, scheduled
exports and integrations call it; every endpoint is a \`GET\`.

## Authentication
Every request carries \`Authorization: Bearer <key>\`. Keys start with \`sk_\`; an operator
creates them with the CLI (\`keys:create\`). A key reads exactly the sites its user is a
member of. Site checks run in this order: 401 → 404 → 403 → 400.

## Conventions
- Bodies are \`{"data": …, "meta": …}\`; field names are snake_case.
- Date ranges: \`from\`/\`to\` are \`YYYY-MM-DD\`, inclusive calendar days in the report
  timezone (the site's, or \`timezone\`); default the trailing 30 days; at most 731 days.
  DST days have 23 or 25 hours; half- and quarter-hour zones are exact.
- Rates are percentages 0–100; rates, averages, durations and money are rounded to 2
  decimals; a rate with a zero denominator is 0. Money is summed exactly in decimal.
- Unknown or repeated query parameters are 400. Errors are RFC 9457 problem details
  (\`application/problem+json\`); a 400 lists each offending parameter in \`errors[]\`.
- Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\` and
  \`RateLimit-Policy\` (but for the few refused before they are metered: 400 for a malformed
  request target, 408, 414, 431), and \`X-Request-Id\` (the request's, or a fresh UUID).
- Reports with rows also answer CSV (RFC 4180) with \`Accept: text/csv\` or \`format=csv\`.
- \`HEAD\` answers as \`GET\` without the body. A success carries an \`ETag\` and
  \`Cache-Control: private, max-age=0, must-revalidate\`: send it back in \`If-None-Match\` and an unchanged
  answer is a \`304\` without a body. Errors carry \`Cache-Control: no-store\` and no ETag.

## Metric definitions
- **Session**: all hits with the same \`session_id\`; it starts at its first hit. Its
  channel, source, country, device and browser come from its first hit (a missing one reads
  \`(unknown)\`, a missing source \`(direct)\`).
- **Visitors**: distinct \`visitor_id\` over the sessions of the range — an exact count.
- **Bounce**: a session with exactly one hit, and that hit a pageview. Bounce rate =
  bounces / sessions × 100.
- **Entry / exit page**: the path of a session's first / last pageview.
- **Session duration**: last hit − first hit, in seconds.
- **Pages per session**: pageviews of the range's sessions / sessions.
- **Attribution**: sessions, visitors, bounces, durations, conversions and pages per session
  belong to the range containing the session start; pageviews, events, orders and revenue
  to the range containing their own timestamp, taking their session's attributes.
- **Goal**: an event name, or a path pattern (a trailing \`*\` matches a prefix). A session
  **converts** a goal when it has at least one matching hit; conversion rate = converted
  sessions / sessions × 100.
- **Order**: purchases deduplicated by \`order_id\` (the first imported hit wins); revenue is
  summed over orders; average order value = revenue / orders.
- **Returning visitor**: a visitor of the range whose first-ever session started before the
  range (not available on cookieless sites, whose visitor ids rotate daily).
- **Funnel**: per visitor, each step-1 hit in the range starts an attempt; step k+1 is reached
  by a later matching hit within \`window_hours\` of the attempt's start.
`.trim();

const TAGS: Array<[string, string]> = [
  ['sites', 'The sites a key can read'],
  ['analytics', 'Traffic, engagement, realtime and funnel reports'],
  ['events', 'Registered custom events'],
  ['conversions', 'Goals and conversions'],
  ['ecommerce', 'Revenue, orders and products'],
];

interface PackageJson {
  version: string;
  license?: string;
}

/** The package's own package.json, found upwards from here (source and dist/ alike). */
function packageJson(): PackageJson {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson & { name?: string };
      if (pkg.name === 'stats-api') return pkg;
    }
    if (path.dirname(dir) === dir) throw new Error('package.json of stats-api not found');
  }
}

/** The licence of package.json as OpenAPI states it: npm's `UNLICENSED` means no licence is granted. */
function licence(pkg: PackageJson): { name: string; url?: string } {
  if (!pkg.license || pkg.license === 'UNLICENSED')
    return { name: 'Proprietary: all rights reserved, no licence granted' };
  return { name: pkg.license, url: `https://spdx.org/licenses/${pkg.license}.html` };
}

/** Response headers, declared once in components.headers and referenced from each response. */
const HEADERS: Record<string, HeaderObject> = {
  'RateLimit-Limit': {
    description: 'Requests allowed per window for this key (or, without a valid key, this address).',
    schema: { type: 'integer', example: 600 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', minimum: 0, example: 599 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends.',
    schema: { type: 'integer', minimum: 0, example: 60 },
  },
  'RateLimit-Policy': {
    description: 'The limit and the window in seconds (`limit;w=seconds`).',
    schema: { type: 'string', pattern: '^\\d+;w=\\d+$', example: '600;w=60' },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0, example: 5 },
  },
  'WWW-Authenticate': {
    description: 'The scheme to authenticate with.',
    schema: { type: 'string', enum: ['Bearer'] },
  },
  Allow: { description: 'The methods the API accepts.', schema: { type: 'string', enum: ['GET, HEAD'] } },
  ETag: {
    description: 'A validator of this answer; send it back in `If-None-Match` to get a 304 while it holds.',
    schema: { type: 'string', example: 'W/"1f4-2Yq0PkzWnS0dq1Vf6mA3mTtXsUM"' },
  },
  'Cache-Control': {
    description:
      'Successes: `private, max-age=0, must-revalidate` (keep it, but revalidate); errors: `no-store`.',
    schema: { type: 'string', enum: ['private, max-age=0, must-revalidate', 'no-store'] },
  },
  'Content-Disposition': {
    description:
      'CSV answers (and their 304s) only: a download with a file name naming the report, site and range.',
    schema: { type: 'string', example: 'attachment; filename="overview_site-1_2026-01-01_2026-01-31.csv"' },
  },
  'X-Request-Id': {
    description:
      'The request id: the `X-Request-Id` sent, when short and plain, else a fresh UUID. Logged with the request.',
    schema: { type: 'string', example: '0b8e7f9e-5d3c-4c1a-9f0e-2a7f3c1d2e4b' },
  },
};

const RATE_LIMIT = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];

/**
 * Which headers each status carries. Metering (RateLimit-*), the request id and
 * Cache-Control apply to everything but Node's own refusals (408, 431, a request that is not
 * HTTP: 400) and the request-target check (414 and a malformed percent-encoding: 400), so on
 * a 400 none is certain. Content-Disposition comes with CSV only.
 */
function headersOf(status: string): Array<[string, boolean]> {
  const always = (names: string[]) => names.map((name): [string, boolean] => [name, true]);
  const metered = always([...RATE_LIMIT, 'X-Request-Id', 'Cache-Control']);
  switch (status) {
    case '200':
      return [...metered, ['ETag', true], ['Content-Disposition', false]];
    case '304':
      return [...metered, ['ETag', true], ['Content-Disposition', false]];
    case '400':
      return [...RATE_LIMIT, 'X-Request-Id', 'Cache-Control'].map((name): [string, boolean] => [name, false]);
    case '401':
      return [...metered, ['WWW-Authenticate', true]];
    case '405':
      return [...metered, ['Allow', true]];
    case '429':
    case '503':
      return [...metered, ['Retry-After', true]];
    case '408':
    case '431':
      return [];
    case '414':
      return always(['X-Request-Id', 'Cache-Control']);
    default:
      return metered;
  }
}

const NOT_MODIFIED: ResponseObject = {
  description:
    'Not Modified: `If-None-Match` holds the current `ETag` of this answer (JSON and CSV have their own). No body.',
};

/** Content-Disposition comes with CSV answers only; every other header in HEADERS is certain where it is referenced. */
const OPTIONAL_HEADERS = new Set(['Content-Disposition']);

/**
 * A header of a response: a reference to components.headers when the component says the
 * right `required` (OpenAPI 3.0 allows nothing beside a $ref), else the header inline.
 */
const header = (name: string, required: boolean): HeaderObject | ReferenceObject =>
  required === !OPTIONAL_HEADERS.has(name)
    ? { $ref: `#/components/headers/${name}` }
    : { ...HEADERS[name], required };

/**
 * What the decorators cannot say, added to the generated document: the response headers of
 * every response, the 304 of a conditional GET, a HEAD operation beside every GET, path
 * parameters before query parameters, nullable references a strict validator accepts, and an
 * opaque bearer key (not a JWT).
 */
function complete(document: OpenAPIObject): OpenAPIObject {
  document.components = {
    ...document.components,
    headers: Object.fromEntries(
      Object.entries(HEADERS).map(([name, h]) => [name, { ...h, required: !OPTIONAL_HEADERS.has(name) }]),
    ),
  };
  nullableRefs(document);
  const bearer = document.components.securitySchemes?.bearer;
  if (bearer && !('$ref' in bearer)) delete bearer.bearerFormat;
  for (const item of Object.values<PathItemObject>(document.paths)) {
    const get = item.get;
    if (!get) continue;
    get.parameters = [...(get.parameters ?? [])].sort((a, b) => Number(!isPath(a)) - Number(!isPath(b)));
    const { '200': ok, ...rest } = get.responses;
    get.responses = { ...(ok ? { '200': ok, '304': NOT_MODIFIED } : {}), ...rest };
    for (const [status, response] of Object.entries(get.responses)) {
      if (!response || '$ref' in response) continue;
      const headers = headersOf(status);
      response.headers = Object.fromEntries(
        headers.map(([name, required]) => [name, header(name, required)]),
      );
      if (Object.keys(response.headers).length === 0) delete response.headers;
    }
    item.head = headOf(get);
  }
  return document;
}

/**
 * OpenAPI 3.0 cannot make a $ref nullable: @nestjs/swagger writes `nullable` beside
 * `allOf: [$ref]`, which strict validators read as "an object, never null". Such a property
 * becomes one of the referenced schema or an explicit null.
 */
const NULL: SchemaObject = { type: 'object', nullable: true, enum: [null] };

function nullableRefs(document: OpenAPIObject): void {
  for (const schema of Object.values(document.components?.schemas ?? {})) {
    if ('$ref' in schema) continue;
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if ('$ref' in property || !property.nullable || property.allOf?.length !== 1) continue;
      const fixed: SchemaObject = { ...property, oneOf: [property.allOf[0], NULL] };
      delete fixed.nullable;
      delete fixed.allOf;
      delete fixed.type;
      schema.properties![name] = fixed;
    }
  }
}

const isPath = (p: ParameterObject | ReferenceObject) => !('$ref' in p) && p.in === 'path';

/** HEAD: the GET operation's parameters, statuses and headers, without any body. */
function headOf(get: OperationObject): OperationObject {
  const id = get.operationId ?? '';
  const responses: OperationObject['responses'] = {};
  for (const [status, response] of Object.entries(get.responses)) {
    if (!response || '$ref' in response) {
      responses[status] = response;
      continue;
    }
    const head: ResponseObject = { ...response, description: `${response.description} (no body: HEAD)` };
    delete head.content;
    responses[status] = head;
  }
  return {
    ...get,
    operationId: id.startsWith('get') ? `head${id.slice(3)}` : `head${id[0].toUpperCase()}${id.slice(1)}`,
    summary: `${get.summary ?? ''} (headers only)`,
    description: `As \`GET\`, with the same status and headers but no body.`,
    responses,
  };
}

/** The OpenAPI document served at /api/docs-json and committed as openapi.json. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const pkg = packageJson();
  const { name, url } = licence(pkg);
  const builder = new DocumentBuilder()
    .setTitle('Statistics API')
    .setDescription(DESCRIPTION)
    .setVersion(pkg.version)
    .setLicense(name, url as string)
    .addServer('/', 'This server')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key: an opaque string starting with `sk_` (not a JWT), created by an operator with `keys:create`.',
    });
  for (const [tag, description] of TAGS) builder.addTag(tag, description);
  return complete(
    SwaggerModule.createDocument(app, builder.build(), {
      operationIdFactory: (_controllerKey: string, methodKey: string) => methodKey,
    }),
  );
}
