import type { Response } from 'express';
import { PROBLEM_CONTENT_TYPE, ProblemBody } from './problem';

/** Answers with a problem body from a middleware, where the ProblemFilter does not reach. */
export function sendProblem(res: Response, body: ProblemBody, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}
