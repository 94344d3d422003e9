import { AsyncLocalStorage } from 'node:async_hooks';

/** Which server the reads of one request go to, decided by its first read. */
export interface ReadPin {
  /** A replica's index, 'primary', or undefined before the first read. */
  server: number | 'primary' | undefined;
  /** A read failed on the request's replica after an earlier read had used it; the rest went to the primary. */
  failedOver: boolean;
}

const pins = new AsyncLocalStorage<ReadPin>();

/**
 * Runs `fn` (the rest of a request) with reads pinned to one server: the data version a
 * cached answer is filed under and the report it caches are then read from the same server
 * (docs/decisions/replicas.md).
 */
export function withReadPin<T>(fn: () => T): T {
  return pins.run({ server: undefined, failedOver: false }, fn);
}

export function currentReadPin(): ReadPin | undefined {
  return pins.getStore();
}
