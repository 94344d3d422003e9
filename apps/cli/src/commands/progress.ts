import { SingleBar } from 'cli-progress';

/** A progress bar on stderr when it is a terminal; silent otherwise (pipes, CI, --json consumers). */
export function progressBar(format: string): SingleBar | undefined {
  if (!process.stderr.isTTY) return undefined;
  return new SingleBar({ format, stream: process.stderr, hideCursor: true, etaBuffer: 50, fps: 5 });
}
