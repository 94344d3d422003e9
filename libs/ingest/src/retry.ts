import { isTransientLockError } from '@app/db';

/** Runs a transaction body again when InnoDB chose it as a deadlock victim. */
export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (e) {
      if (attempt >= attempts || !isTransientLockError(e)) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}
