import OpenAPIResponseValidator from 'openapi-response-validator';
import type { OpenAPIV3 } from 'openapi-types';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** One response as test/support/response-recorder.js wrote it down. */
export interface RecordedResponse {
  pid?: number;
  method: string;
  url: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

export const COMMITTED_OPENAPI = path.join(__dirname, '../../openapi.json');

/** The part of the URL space the document describes; /health, /metrics and /api/docs are not in it. */
const API_PREFIX = '/api/v1';

/**
 * Headers a client relies on: when a response carries one of these, the document must
 * declare it on that response (issue #13).
 */
export const CONTRACT_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'retry-after',
  'www-authenticate',
  'allow',
  'etag',
  'cache-control',
  'content-disposition',
  'x-request-id',
];

const FORMATS = {
  date: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
  'date-time': (value: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
    !Number.isNaN(Date.parse(value)),
};

type Operation = OpenAPIV3.OperationObject;
type Response = OpenAPIV3.ResponseObject;

/** What any response to an /api/v1 path the document does not have must be: a problem. */
const OUTSIDE: Response = {
  description: 'A path the API does not have (404), or a refusal before routing',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetailsDto' } } },
};

/**
 * Checks recorded responses against an OpenAPI 3.0 document: the operation (path template
 * and method; a method the path does not document is checked against the path's GET, which
 * documents the 405), a documented status, a documented media type, the body against the
 * schema of that media type, and the documented headers against their schemas (required
 * ones present). Bodies and headers are validated by `openapi-response-validator` (Ajv);
 * this class only picks what to validate against.
 */
export class OpenApiContract {
  private readonly routes: Array<{ template: string; pattern: RegExp; item: OpenAPIV3.PathItemObject }>;
  private readonly validators = new Map<string, OpenAPIResponseValidator>();

  constructor(private readonly doc: OpenAPIV3.Document) {
    this.routes = Object.entries(doc.paths).map(([template, item]) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}/?$`,
      ),
      item: item!,
    }));
  }

  static fromFile(file = COMMITTED_OPENAPI): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(file, 'utf8')) as OpenAPIV3.Document);
  }

  /** Whether the document speaks about this URL at all. */
  covers(url: string): boolean {
    const pathname = pathOf(url);
    // Routes that suites mount for themselves (`test-…`, e.g. a query that holds a connection)
    // are not the API's.
    if (/\/test-[a-z-]+(\/|$)/.test(pathname)) return false;
    return pathname === API_PREFIX || pathname.startsWith(`${API_PREFIX}/`);
  }

  /** What is wrong with a response by the document: [] when it conforms or lies outside it. */
  check(r: RecordedResponse): string[] {
    if (!this.covers(r.url)) return [];
    // A CORS preflight is answered by the CORS layer as the Fetch standard says, not by the API.
    if (r.method === 'OPTIONS' && 'access-control-allow-methods' in r.headers) return [];
    const where = `${r.method} ${r.url.length > 120 ? `${r.url.slice(0, 120)}…` : r.url} → ${r.status}`;
    const { label, response } = this.documentedResponse(r);
    if (!response) return [`${where}: status ${r.status} is not documented for ${label}`];
    return [...this.checkBody(r, label, response), ...this.checkHeaders(r, label, response)].map(
      (problem) => `${where}: ${problem}`,
    );
  }

  private documentedResponse(r: RecordedResponse): { label: string; response?: Response } {
    const pathname = pathOf(r.url);
    const route = this.routes.find((candidate) => candidate.pattern.test(pathname));
    if (!route) {
      // A path the API does not have: whatever answers it (404, 401, 405, 429, …) is a problem body.
      return { label: 'a path outside the document (any problem response)', response: OUTSIDE };
    }
    const method = r.method.toLowerCase() as OpenAPIV3.HttpMethods;
    const operation: Operation | undefined = route.item[method] ?? route.item.get;
    const label = `${route.item[method] ? r.method : `${r.method} (checked as GET)`} ${route.template}`;
    const response = operation?.responses?.[String(r.status)];
    return { label, response: response ? this.resolve<Response>(response) : undefined };
  }

  private checkBody(r: RecordedResponse, label: string, response: Response): string[] {
    const content = response.content ?? {};
    const mediaTypes = Object.keys(content);
    if (r.body === '') {
      return mediaTypes.length === 0 || r.method === 'HEAD'
        ? []
        : [`empty body, but ${label} documents ${mediaTypes.join(', ')}`];
    }
    if (mediaTypes.length === 0) return [`a body, but ${label} documents none for ${r.status}`];
    const contentType = headerText(r.headers['content-type']).split(';')[0].trim().toLowerCase();
    if (!(contentType in content)) {
      return [`Content-Type "${contentType}" is not documented (${mediaTypes.join(', ')})`];
    }
    let body: unknown = r.body;
    if (/[/+]json$/.test(contentType)) {
      try {
        body = JSON.parse(r.body);
      } catch {
        return [`the body is not JSON: ${r.body.slice(0, 80)}`];
      }
    }
    const media = content[contentType];
    const key = `${label}|${r.status}|${contentType}`;
    const result = this.validator(key, r.status, media.schema ?? {}).validateResponse(r.status, body);
    return result ? this.describe('body', result.errors as unknown[]) : [];
  }

  private checkHeaders(r: RecordedResponse, label: string, response: Response): string[] {
    const documented = Object.fromEntries(
      Object.entries(response.headers ?? {}).map(([name, header]) => [
        name.toLowerCase(),
        this.resolve<OpenAPIV3.HeaderObject>(header),
      ]),
    );
    // Outside the document there is no response to document a header on.
    const problems = (response === OUTSIDE ? [] : CONTRACT_HEADERS)
      .filter((name) => name in r.headers && !(name in documented))
      .map((name) => `header ${name} is sent but not documented on ${label} ${r.status}`);
    const properties: Record<string, OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject> = {};
    const required: string[] = [];
    const values: Record<string, unknown> = {};
    for (const [name, header] of Object.entries(documented)) {
      const schema = header.schema ?? {};
      properties[name] = schema;
      if (header.required) required.push(name);
      if (name in r.headers)
        values[name] = coerce(r.headers[name], this.resolve<OpenAPIV3.SchemaObject>(schema));
    }
    const schema: OpenAPIV3.SchemaObject = { type: 'object', properties, required };
    const result = this.validator(`${label}|${r.status}|headers`, r.status, schema).validateResponse(
      r.status,
      values,
    );
    return [...problems, ...(result ? this.describe('headers', result.errors as unknown[]) : [])];
  }

  private validator(
    key: string,
    status: number,
    schema: OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject,
  ): OpenAPIResponseValidator {
    let validator = this.validators.get(key);
    if (!validator) {
      validator = new OpenAPIResponseValidator({
        responses: { [String(status)]: { schema: schema } },
        components: this.doc.components,
        customFormats: FORMATS,
      });
      this.validators.set(key, validator);
    }
    return validator;
  }

  private describe(part: string, errors: unknown[]): string[] {
    return errors.map((e) => {
      const error = e as { path?: string; message?: string };
      return `${part}${error.path ? ` at ${error.path}` : ''}: ${error.message ?? JSON.stringify(e)}`;
    });
  }

  private resolve<T>(value: T | OpenAPIV3.ReferenceObject): T {
    if (!value || typeof value !== 'object' || !('$ref' in value)) return value;
    const [, section, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(value.$ref) ?? [];
    const target = (this.doc.components as Record<string, Record<string, unknown>> | undefined)?.[section]?.[
      name
    ];
    if (!target) throw new Error(`openapi.json: unresolved ${value.$ref}`);
    return this.resolve(target as T);
  }
}

/** The path of a request target, as Express routes it (a `#` never reaches a server from a browser, but may from a raw client). */
const pathOf = (url: string): string => url.split(/[?#]/)[0];

/** A recorded header value (a string, a number, or a list of strings) as text. */
function headerText(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => headerText(v)).join(', ');
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** Header values are text; a header documented as a number is compared as one. */
function coerce(value: unknown, schema: OpenAPIV3.SchemaObject): unknown {
  const text = headerText(value);
  if ((schema.type === 'integer' || schema.type === 'number') && /^-?\d+(\.\d+)?$/.test(text))
    return Number(text);
  return text;
}
