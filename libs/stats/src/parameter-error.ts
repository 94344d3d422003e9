/**
 * A request parameter the statistics engine cannot work with (a range over the limit, a
 * malformed funnel step). Thrown from anywhere below the controllers without knowing about
 * HTTP; the ProblemFilter answers it as a 400 naming `parameter`.
 */
export class ParameterError extends Error {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(message);
    this.name = 'ParameterError';
  }
}
