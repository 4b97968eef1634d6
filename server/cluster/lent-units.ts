/**
 * Units the primary lent to workers (leases, ipc-counters.ts) and the workers have not handed out
 * yet, per worker and in all, for each counter: a workspace's minute window, a workspace's month, a
 * capped project's month. The counters count lent units from the moment they are lent (so no limit
 * is ever passed); the units *used* (what the limit headers report) are the counted ones less these.
 */
import type { LeaseScope } from './messages.js';

/** The keys of a scope's counters (the project's only when capped). */
export function counterKeys(
  scope: Pick<LeaseScope, 'workspaceId' | 'projectId' | 'window' | 'month' | 'project'>,
) {
  return {
    minute: `m\n${scope.workspaceId}\n${scope.window}`,
    month: `w\n${scope.workspaceId}\n${scope.month}`,
    project: scope.project ? `p\n${scope.projectId}\n${scope.month}` : null,
  };
}

/** One worker's lent units, by counter key. */
export type PeerLent = Map<string, number>;

export class LentUnits {
  private readonly total = new Map<string, number>();

  /** Lent units of the counter `key` no worker has handed out yet. */
  of(key: string | null): number {
    return key === null ? 0 : (this.total.get(key) ?? 0);
  }

  /** `units` more (lent) or fewer (handed out or returned) of `peer`'s units of `scope`. */
  change(peer: PeerLent, scope: LeaseScope, units: number): void {
    const keys = counterKeys(scope);
    this.changeKey(peer, keys.minute, units);
    this.changeKey(peer, keys.month, units);
    if (keys.project !== null) this.changeKey(peer, keys.project, units);
  }

  /** A worker gone: its lent units count as used (how many it handed out is unknown). */
  drop(peer: PeerLent): void {
    for (const [key, units] of peer) this.add(this.total, key, -units);
    peer.clear();
  }

  private changeKey(peer: PeerLent, key: string, units: number): void {
    // A worker never has fewer than none (a late message after a recall, say).
    const before = peer.get(key) ?? 0;
    const after = Math.max(0, before + units);
    this.add(peer, key, after - before);
    this.add(this.total, key, after - before);
  }

  private add(map: Map<string, number>, key: string, units: number): void {
    const value = (map.get(key) ?? 0) + units;
    if (value <= 0) map.delete(key);
    else map.set(key, value);
  }
}
