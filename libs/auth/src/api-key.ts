import { createHash, randomBytes } from 'node:crypto';

const KEY_PREFIX = 'sk_';
/** 32 random bytes in base64url are 43 characters. */
const KEY_PATTERN = /^sk_[A-Za-z0-9_-]{43,128}$/;
const DISPLAY_PREFIX_LENGTH = 10;

export interface NewApiKey {
  /** The secret, shown once to the operator. */
  key: string;
  /** Stored: SHA-256 of the key, hex. */
  hash: string;
  /** Stored: the first characters, to tell keys apart in listings. */
  prefix: string;
}

export function generateApiKey(): NewApiKey {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashApiKey(key), prefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/**
 * A fast hash is right here: keys carry 256 random bits, so there is nothing to brute-force,
 * and a deterministic digest lets the guard find a key with one indexed lookup.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Extracts the token of an `Authorization: Bearer <token>` header; undefined when absent or another scheme. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
