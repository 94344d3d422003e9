import { ParameterError } from '@app/stats/parameter-error';

export type FunnelStep = { type: 'pageview'; path: string } | { type: 'event'; name: string };

export interface FunnelStepLimits {
  maxSteps: number;
  maxBytes: number;
}

const PATH_MAX_CHARS = 2048;
const NAME_MAX_CHARS = 255;
const STEP_FIELDS: Record<FunnelStep['type'], string> = { pageview: 'path', event: 'name' };

function fail(message: string): never {
  throw new ParameterError('steps', message);
}

/**
 * The `steps` query parameter (SPEC §4 funnel): a JSON array of 1 to `maxSteps` steps,
 * `{"type":"pageview","path":"/pricing"}` or `{"type":"event","name":"signup"}`, at most
 * `maxBytes` bytes of UTF-8. Every mistake is a ParameterError on `steps` saying which step
 * is wrong; unknown fields are refused like unknown query parameters (they are typos).
 */
export function parseFunnelSteps(raw: string, limits: FunnelStepLimits): FunnelStep[] {
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > limits.maxBytes) {
    fail(`steps is ${bytes} bytes long; at most ${limits.maxBytes} bytes are allowed`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    fail('steps must be valid JSON: an array such as [{"type":"pageview","path":"/pricing"}]');
  }
  if (!Array.isArray(parsed)) fail('steps must be a JSON array of steps');
  if (parsed.length === 0) fail('steps must hold at least 1 step');
  if (parsed.length > limits.maxSteps) {
    fail(`steps holds ${parsed.length} steps; at most ${limits.maxSteps} are allowed`);
  }
  return parsed.map((step, i) => parseStep(step, i + 1));
}

function parseStep(step: unknown, position: number): FunnelStep {
  if (typeof step !== 'object' || step === null || Array.isArray(step)) {
    fail(`step ${position} must be an object with a "type"`);
  }
  const fields = step as Record<string, unknown>;
  const type = fields.type;
  if (type !== 'pageview' && type !== 'event') {
    fail(
      `step ${position} has ${type === undefined ? 'no type' : `the unknown type ${JSON.stringify(type)}`}; ` +
        'use "pageview" or "event"',
    );
  }
  const unknown = Object.keys(fields).find((key) => key !== 'type' && key !== STEP_FIELDS[type]);
  if (unknown !== undefined) {
    fail(`step ${position} (${type}) has the unknown field ${JSON.stringify(unknown)}`);
  }
  if (type === 'pageview') {
    const path = fields.path;
    if (typeof path !== 'string' || !path.startsWith('/') || Array.from(path).length > PATH_MAX_CHARS) {
      fail(
        `step ${position} (pageview) needs a "path": a string starting with "/", at most ${PATH_MAX_CHARS} characters`,
      );
    }
    return { type, path };
  }
  const name = fields.name;
  if (typeof name !== 'string' || name.length === 0 || Array.from(name).length > NAME_MAX_CHARS) {
    fail(`step ${position} (event) needs a "name": a string of 1 to ${NAME_MAX_CHARS} characters`);
  }
  return { type, name };
}
