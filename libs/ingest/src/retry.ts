const RETRYABLE = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);

/** Runs a transaction body again when InnoDB chose it as a deadlock victim. */
export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (e) {
      const code =
        (e as { code?: string; driverError?: { code?: string } }).driverError?.code ??
        (e as { code?: string }).code;
      if (attempt >= attempts || !code || !RETRYABLE.has(code)) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}
