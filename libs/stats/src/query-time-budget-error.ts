/** A report query ran longer than the query time budget (SPEC §5) and was stopped: answered 503. */
export class QueryTimeBudgetError extends Error {
  /** The driver's own error, as TypeORM exposes it on a failed query. */
  readonly driverError: unknown;

  constructor(cause: unknown) {
    super('the report query exceeded its time budget');
    this.name = 'QueryTimeBudgetError';
    this.driverError = (cause as { driverError?: unknown } | null)?.driverError ?? cause;
  }
}
