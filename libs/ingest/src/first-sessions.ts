/** A derived session as the visitors table reads it. */
export interface VisitorSession {
  session_id: string;
  visitor_id: string;
  started_at: Date | string;
}

const startOf = (s: VisitorSession) => new Date(s.started_at).getTime();

/**
 * A visitor's first session (`visitors.first_session_at`, what "returning" is judged by, SPEC
 * §1) is the earliest start of its sessions. When a chunk's sessions (`before` and `after` it
 * re-derived them) only began earlier or are new, each touched visitor's first session is the
 * stored one or the earliest of these, whichever is earlier: returns that earliest start by
 * visitor (epoch ms). `undefined` when a session started later than before, left its visitor or
 * is gone: a first session may then have moved later, and only the visitor's sessions tell.
 */
export function earliestStarts(
  before: readonly VisitorSession[],
  after: readonly VisitorSession[],
): Map<string, number> | undefined {
  const now = new Map(after.map((s) => [s.session_id, s]));
  for (const was of before) {
    const is = now.get(was.session_id);
    if (!is || is.visitor_id !== was.visitor_id || startOf(is) > startOf(was)) return undefined;
  }
  const earliest = new Map<string, number>();
  for (const s of after) {
    const at = startOf(s);
    const known = earliest.get(s.visitor_id);
    if (known === undefined || at < known) earliest.set(s.visitor_id, at);
  }
  return earliest;
}
