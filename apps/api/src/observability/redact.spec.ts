import { redactKeys, redactKeysDeep } from './logging.module';

const key = `sk_${'Ab0_-'.repeat(9)}`;

describe(redactKeys.name, () => {
  it.each([
    [`/api/v1/sites?api_key=${key}`, '/api/v1/sites?api_key=sk_[redacted]'],
    [`/x?token=${key.replace('_', '%5F')}&a=1`, '/x?token=sk_[redacted]&a=1'],
    [`/api/v1/${key}/events`, '/api/v1/sk_[redacted]/events'],
    ['/api/v1/sites/1/task_list', '/api/v1/sites/1/task_list'],
  ])('redacts %s', (text, redacted) => {
    expect(redactKeys(text)).toBe(redacted);
  });

  it('redacts key-shaped strings in headers and nested fields, whatever their names', () => {
    expect(
      redactKeysDeep({ req: { headers: { 'x-api-key': key, other: ['a', `Bearer ${key}`] } }, n: 1 }),
    ).toEqual({
      req: { headers: { 'x-api-key': 'sk_[redacted]', other: ['a', 'Bearer sk_[redacted]'] } },
      n: 1,
    });
  });
});
