import { Injectable } from '@nestjs/common';

/** A failure the operator can act on; printed without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * Where commands print. With `--json`, stdout carries exactly one JSON object and nothing
 * else; human text and diagnostics go to stderr then.
 */
@Injectable()
export class Output {
  json = false;

  /** The command's result: JSON on stdout, or the human text. */
  result(value: object, human: string): void {
    if (this.json) process.stdout.write(`${JSON.stringify(value)}\n`);
    else process.stdout.write(`${human}\n`);
  }

  /** Diagnostics (warnings, rejected lines, progress) always go to stderr. */
  info(message: string): void {
    process.stderr.write(`${message}\n`);
  }

  error(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
    if (this.json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  }
}
