import { positionCovers, ReplicationPosition } from './dialect';

interface Sample {
  at: number;
  position: ReplicationPosition;
}

/**
 * How far a replica is behind, measured from GTID positions rather than trusted from the
 * replica's own Seconds_Behind_Master (which needs a privilege, reads 0 while the I/O thread
 * is behind, and NULL once replication stopped).
 *
 * The primary's position is sampled at every health check; a replica's lag is the time since
 * the primary was first seen at a position the replica has not applied yet, 0 when it has
 * applied everything seen. The resolution is the health-check interval. A replica that has
 * not even reached the first position seen (the API just started) has an unknown lag: it is
 * treated as too far behind until it gets there.
 */
export class ReplicationLag {
  private readonly samples: Sample[] = [];
  private baselineKept = true;

  constructor(private readonly keepMs: number) {}

  /** Records the primary's position seen at `at` (ms). */
  recordPrimary(position: ReplicationPosition, at: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last && positionCovers(last.position, position)) return;
    this.samples.push({ at, position });
    // Older samples only matter for replicas already known to be far behind.
    while (this.samples.length > 2 && this.samples[1].at < at - this.keepMs) {
      this.samples.shift();
      this.baselineKept = false;
    }
  }

  /** Seconds behind for a replica at `position` now; null when unknown (behind the first sample). */
  lagSeconds(position: ReplicationPosition, now: number): number | null {
    const first = this.samples.findIndex((s) => !positionCovers(position, s.position));
    if (first < 0) return 0;
    if (first === 0 && this.baselineKept) return null;
    return Math.max(0, (now - this.samples[first].at) / 1000);
  }
}
