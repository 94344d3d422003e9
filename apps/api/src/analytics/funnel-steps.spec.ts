import { ParameterError } from '@app/stats/parameter-error';
import { parseFunnelSteps } from './funnel-steps';

const LIMITS = { maxSteps: 10, maxBytes: 4096 };

function errorOf(raw: string, limits = LIMITS): ParameterError {
  try {
    parseFunnelSteps(raw, limits);
  } catch (error) {
    if (error instanceof ParameterError) return error;
    throw error;
  }
  throw new Error('expected a ParameterError');
}

describe(parseFunnelSteps.name, () => {
  it('reads pageview and event steps in order', () => {
    const raw = JSON.stringify([
      { type: 'pageview', path: '/pricing' },
      { type: 'event', name: 'signup' },
      { type: 'pageview', path: '/blog/*' },
    ]);

    expect(parseFunnelSteps(raw, LIMITS)).toEqual([
      { type: 'pageview', path: '/pricing' },
      { type: 'event', name: 'signup' },
      { type: 'pageview', path: '/blog/*' },
    ]);
  });

  it('accepts exactly maxSteps steps and refuses one more, naming the limit', () => {
    const step = { type: 'event', name: 'x' };

    expect(parseFunnelSteps(JSON.stringify(Array(10).fill(step)), LIMITS)).toHaveLength(10);
    const error = errorOf(JSON.stringify(Array(11).fill(step)));
    expect(error.parameter).toBe('steps');
    expect(error.message).toContain('at most 10');
  });

  it('refuses an empty array', () => {
    expect(errorOf('[]').message).toContain('at least 1');
  });

  it('measures the size in UTF-8 bytes, not characters', () => {
    // "é" is 2 bytes: [{"type":"event","name":""}] is 28 bytes, plus 20 × "é" (40 bytes) = 68 bytes.
    const raw = JSON.stringify([{ type: 'event', name: 'é'.repeat(20) }]);
    expect(Buffer.byteLength(raw)).toBe(68);

    expect(parseFunnelSteps(raw, { maxSteps: 10, maxBytes: 68 })).toHaveLength(1);
    expect(errorOf(raw, { maxSteps: 10, maxBytes: 67 }).message).toContain('68 bytes');
  });

  it('refuses a steps parameter over 4 KB before parsing it', () => {
    expect(errorOf(`[${' '.repeat(4096)}]`).message).toContain('at most 4096 bytes');
  });

  it.each(['', '[', '{"type":"event"', 'pricing', "[{'type':'event','name':'x'}]"])(
    'refuses the malformed JSON %p',
    (raw) => {
      const error = errorOf(raw);
      expect(error.parameter).toBe('steps');
      expect(error.message).toContain('valid JSON');
    },
  );

  it.each(['{"type":"event","name":"x"}', '"x"', '3', 'null'])('refuses %p, which is not an array', (raw) => {
    expect(errorOf(raw).message).toContain('array');
  });

  it.each([
    ['[1]', 'step 1 must be an object'],
    ['[null]', 'step 1 must be an object'],
    ['[[]]', 'step 1 must be an object'],
    ['[{"path":"/a"}]', 'step 1 has no type'],
    ['[{"type":"click","name":"x"}]', 'the unknown type "click"'],
    ['[{"type":"Pageview","path":"/a"}]', 'the unknown type "Pageview"'],
    ['[{"type":"event","name":"a"},{"type":"pageview"}]', 'step 2 (pageview) needs a "path"'],
    ['[{"type":"pageview","path":""}]', 'step 1 (pageview) needs a "path"'],
    ['[{"type":"pageview","path":"pricing"}]', 'starting with "/"'],
    ['[{"type":"pageview","path":5}]', 'step 1 (pageview) needs a "path"'],
    ['[{"type":"event"}]', 'step 1 (event) needs a "name"'],
    ['[{"type":"event","name":""}]', 'step 1 (event) needs a "name"'],
    ['[{"type":"event","name":"a","path":"/a"}]', 'the unknown field "path"'],
    ['[{"type":"pageview","path":"/a","label":"x"}]', 'the unknown field "label"'],
  ])('refuses %s: %s', (raw, message) => {
    const error = errorOf(raw);
    expect(error.parameter).toBe('steps');
    expect(error.message).toContain(message);
  });

  it('refuses a path over 2048 characters and a name over 255', () => {
    expect(errorOf(JSON.stringify([{ type: 'pageview', path: `/${'a'.repeat(2048)}` }])).message).toContain(
      '2048',
    );
    expect(
      errorOf(JSON.stringify([{ type: 'event', name: 'a'.repeat(256) }]), { maxSteps: 10, maxBytes: 10_000 })
        .message,
    ).toContain('255');
  });
});
