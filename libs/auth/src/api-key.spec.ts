import { bearerToken, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key';

describe(generateApiKey.name, () => {
  it('makes sk_ keys of 32 random bytes in base64url, different every time', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.key.slice(3), 'base64url')).toHaveLength(32);
    expect(a.key).not.toBe(b.key);
  });

  it('returns the hash of the key and a short display prefix that cannot be used as the key', () => {
    const k = generateApiKey();
    expect(k.hash).toBe(hashApiKey(k.key));
    expect(k.prefix).toBe(k.key.slice(0, 10));
    expect(isWellFormedApiKey(k.prefix)).toBe(false);
  });
});

describe(hashApiKey.name, () => {
  it('is SHA-256 hex of the whole key', () => {
    // printf sk_test | sha256sum
    expect(hashApiKey('sk_test')).toBe('12b2820cf1639904311da5771de1e5bb65c77073fdc7c555df395942df42896b');
    expect(hashApiKey('sk_test')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('sk_test')).not.toBe(hashApiKey('sk_tesT'));
  });
});

describe(isWellFormedApiKey.name, () => {
  it.each([
    ['sk_' + 'a'.repeat(43), true],
    ['sk_' + 'a'.repeat(42), false],
    ['pk_' + 'a'.repeat(43), false],
    ['sk_' + 'a'.repeat(40) + '+/=', false],
    ['', false],
  ])('%s → %s', (key, expected) => {
    expect(isWellFormedApiKey(key)).toBe(expected);
  });
});

describe(bearerToken.name, () => {
  it('extracts the token of a Bearer header, case-insensitive scheme', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer abc')).toBe('abc');
  });

  it('returns undefined for other schemes, missing tokens and arrays', () => {
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken(['Bearer a'])).toBeUndefined();
  });
});
