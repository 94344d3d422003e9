/**
 * Stops a process group the suite spawned (detached): SIGTERM, then SIGKILL if it has not
 * exited within `graceMs`. The grace timer is cleared once the group exits, so that it does not
 * keep Jest from exiting.
 */
export async function stopProcessGroup(
  pid: number | undefined,
  exited: Promise<unknown>,
  graceMs = 15_000,
): Promise<void> {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs))),
  ]);
  clearTimeout(timer);
  if (stopped === 'timeout') {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
