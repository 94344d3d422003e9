import { requestIdOf } from './request-id';

describe(requestIdOf.name, () => {
  it.each(['abc', 'trace-42.a:b', '0b5f6c1e-8d3a-4b8e-9a47-0d7f7c8e1f20', 'a'.repeat(128)])(
    'keeps %s',
    (id) => {
      expect(requestIdOf(id)).toBe(id);
    },
  );

  it.each([
    undefined,
    '',
    ' leading-space',
    'a'.repeat(129),
    'line\nbreak',
    'quote"',
    '<script>',
    '-starts-with-dash',
  ])('replaces %p with a UUID', (id) => {
    expect(requestIdOf(id)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('replaces a repeated header', () => {
    expect(requestIdOf(['a', 'b'])).not.toMatch(/^[ab]$/);
  });
});

describe('requestIdOf and API keys', () => {
  it('replaces an id shaped like an API key, which would otherwise be logged and echoed', () => {
    expect(requestIdOf(`sk_${'A'.repeat(43)}`)).toMatch(/^[0-9a-f-]{36}$/);
  });
});
