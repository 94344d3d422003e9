/** A session's hits of one event name in one 15-minute UTC bucket (a session_event_buckets row). */
export interface SessionEventBucket {
  session_id: string;
  name: string;
  bucket: Date;
  hits: number;
}

/** One event_rollups row's change: hits of the name in the bucket, and sessions with such hits. */
export interface EventRollupDelta {
  bucket: Date;
  name: string;
  occurrences: number;
  sessions: number;
}

/** One event_links row's change: sessions whose consecutive buckets with hits of the name are these. */
export interface EventLinkDelta {
  toBucket: Date;
  name: string;
  fromBucket: Date;
  sessions: number;
}

/**
 * What the event rollups hold for a set of sessions, each session's buckets with hits of a
 * name counted once per bucket and each pair of consecutive such buckets once (a session with
 * hits in k buckets of a range has k − 1 pairs inside it, so Σ sessions − Σ pairs over a range
 * is its distinct sessions): `before` (as stored) subtracted, `after` (from the hits) added,
 * netted per row; rows whose change is zero are left out.
 */
export function eventRollupDeltas(
  before: readonly SessionEventBucket[],
  after: readonly SessionEventBucket[],
): { rollups: EventRollupDelta[]; links: EventLinkDelta[] } {
  const rollups = new Map<string, EventRollupDelta>();
  const links = new Map<string, EventLinkDelta>();
  const add = (rows: readonly SessionEventBucket[], sign: 1 | -1) => {
    const bySessionName = new Map<string, SessionEventBucket[]>();
    for (const r of rows) {
      const key = `${r.session_id}\u0000${r.name}`;
      bySessionName.set(key, [...(bySessionName.get(key) ?? []), r]);
    }
    for (const list of bySessionName.values()) {
      list.sort((a, b) => a.bucket.getTime() - b.bucket.getTime());
      list.forEach((r, i) => {
        const key = `${r.bucket.getTime()}\u0000${r.name}`;
        const d = rollups.get(key) ?? { bucket: r.bucket, name: r.name, occurrences: 0, sessions: 0 };
        d.occurrences += sign * r.hits;
        d.sessions += sign;
        rollups.set(key, d);
        if (i === 0) return;
        const from = list[i - 1].bucket;
        const linkKey = `${r.bucket.getTime()}\u0000${r.name}\u0000${from.getTime()}`;
        const l = links.get(linkKey) ?? { toBucket: r.bucket, name: r.name, fromBucket: from, sessions: 0 };
        l.sessions += sign;
        links.set(linkKey, l);
      });
    }
  };
  add(before, -1);
  add(after, 1);
  return {
    rollups: [...rollups.values()].filter((d) => d.sessions !== 0 || d.occurrences !== 0),
    links: [...links.values()].filter((d) => d.sessions !== 0),
  };
}

/**
 * The same changes by the site's day (`dayOf`: localDayBucket, whose days hold whole 15-minute
 * buckets), for event_day_rollups and event_day_links. A day row counts the hits of the name in
 * the day and the sessions with such hits: Σ sessions of its buckets − Σ links between two of
 * its buckets (a session's buckets within a day are a chain). A link between buckets of two
 * different days stays a link (event_day_links, still by 15-minute buckets): a range read from
 * day rows subtracts those whose both ends are in it, and the 15-minute links in its ragged
 * quarter hours, and so counts each session once (events.queries.ts).
 */
export function eventDayDeltas(
  deltas: { rollups: readonly EventRollupDelta[]; links: readonly EventLinkDelta[] },
  dayOf: (bucket: Date) => Date,
): { rollups: EventRollupDelta[]; links: EventLinkDelta[] } {
  const days = new Map<string, EventRollupDelta>();
  const dayRow = (bucket: Date, name: string) => {
    const day = dayOf(bucket);
    const key = `${day.getTime()}\u0000${name}`;
    const row = days.get(key) ?? { bucket: day, name, occurrences: 0, sessions: 0 };
    days.set(key, row);
    return row;
  };
  for (const d of deltas.rollups) {
    const row = dayRow(d.bucket, d.name);
    row.occurrences += d.occurrences;
    row.sessions += d.sessions;
  }
  const links: EventLinkDelta[] = [];
  for (const l of deltas.links) {
    if (dayOf(l.fromBucket).getTime() === dayOf(l.toBucket).getTime())
      dayRow(l.toBucket, l.name).sessions -= l.sessions;
    else links.push({ ...l });
  }
  return {
    rollups: [...days.values()].filter((d) => d.sessions !== 0 || d.occurrences !== 0),
    links,
  };
}

/** One page_event_rollups row's change: event_rollups' row among the sessions with a pageview of `pageKey`. */
export interface PageEventRollupDelta extends EventRollupDelta {
  pageKey: string;
}

/** One page_event_links row's change: event_links' row among the sessions with a pageview of `pageKey`. */
export interface PageEventLinkDelta extends EventLinkDelta {
  pageKey: string;
}

/**
 * The event rollups' changes (eventRollupDeltas) for each page key, among the sessions with a
 * pageview of it (session_pages' rows): a session's buckets count under each of its page keys,
 * `before` under those it had (`pagesBefore`: session id → page keys), `after` under those it has
 * now. So the rows of one page key count what event_rollups and event_links count, over the
 * sessions `page==` that path selects (SPEC §3), and are read the same way (events.queries.ts).
 */
export function pageEventRollupDeltas(
  before: readonly SessionEventBucket[],
  after: readonly SessionEventBucket[],
  pagesBefore: ReadonlyMap<string, readonly string[]>,
  pagesAfter: ReadonlyMap<string, readonly string[]>,
): { rollups: PageEventRollupDelta[]; links: PageEventLinkDelta[] } {
  const byPage = new Map<string, { before: SessionEventBucket[]; after: SessionEventBucket[] }>();
  const share = (
    rows: readonly SessionEventBucket[],
    pages: ReadonlyMap<string, readonly string[]>,
    side: 'before' | 'after',
  ) => {
    for (const r of rows) {
      for (const pageKey of pages.get(r.session_id) ?? []) {
        const of = byPage.get(pageKey) ?? { before: [], after: [] };
        of[side].push(r);
        byPage.set(pageKey, of);
      }
    }
  };
  share(before, pagesBefore, 'before');
  share(after, pagesAfter, 'after');
  const rollups: PageEventRollupDelta[] = [];
  const links: PageEventLinkDelta[] = [];
  for (const [pageKey, rows] of byPage) {
    const deltas = eventRollupDeltas(rows.before, rows.after);
    for (const d of deltas.rollups) rollups.push({ ...d, pageKey });
    for (const l of deltas.links) links.push({ ...l, pageKey });
  }
  return { rollups, links };
}
