/**
 * Computing a release's events once (docs/decisions/0034): the caller that takes the run's lease
 * in the accounts store diffs the release against the chain's previous head (its file in the
 * releases directory) on a worker thread (compute-thread.ts), inserts the events (idempotent: same
 * ids every time) and marks the run done, renewing the lease meanwhile. Any process may call this
 * for the release it now serves; only one computes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AccountsStore } from '../../accounts/index.js';
import { SETTINGS } from '../../shared/config.js';
import type { Release } from '../../shared/queries/index.js';
import { computeEventsOffThread } from './compute-thread.js';

/** WATCH_RUN_LEASE_MS's default: how long a computation may take before another process may redo it. */
export const RUN_LEASE_MS = SETTINGS.WATCH_RUN_LEASE_MS.schema.parse(undefined);

export type RunOutcome =
  | { status: 'skipped' }
  /** Another process holds the lease: it computes, unless it dies first (ask again later). */
  | { status: 'held' }
  | { status: 'started_chain' }
  | { status: 'computed'; previous: string; events: number; inserted: number; ms: number }
  | { status: 'missing_previous'; previous: string }
  /**
   * The lease went to another process while this one computed (a renewal found it taken, or
   * failed until it expired): that process computes the run; what this one inserted (if anything)
   * carries the same event ids, so nothing is doubled.
   */
  | { status: 'lost'; previous: string; renewalErrors: number };

export async function computeReleaseEvents(
  store: AccountsStore,
  releasesDir: string,
  /** The release whose events these are: its id and its file. */
  release: Pick<Release, 'id' | 'file'>,
  owner: string,
  { now = () => new Date(), leaseMs = RUN_LEASE_MS }: { now?: () => Date; leaseMs?: number } = {},
): Promise<RunOutcome> {
  const claim = await store.claimWatchRun(release.id, owner, leaseMs, now());
  if (claim === 'skip') return { status: 'skipped' };
  if (claim === 'held') return { status: 'held' };
  if (claim.previousRelease === null) {
    await store.finishWatchRun(release.id, owner, 0, now());
    return { status: 'started_chain' };
  }
  const previous = claim.previousRelease;
  const file = path.join(releasesDir, `${previous}.sqlite`);
  if (!fs.existsSync(file)) return { status: 'missing_previous', previous };
  const started = performance.now();
  // The heartbeat: while this process computes and inserts, the lease stays its own (a
  // computation may outlast one lease: 209 s at full scale, decision 0034). A renewal that finds
  // the lease taken ends it: the events are not inserted and the run is left to its new owner.
  let lost = false;
  let renewalErrors = 0;
  const heartbeat = setInterval(
    () => {
      if (lost) return;
      store.renewWatchRun(release.id, owner, leaseMs, now()).then(
        (renewed) => {
          if (!renewed) lost = true;
        },
        () => {
          // The store does not answer now: the next beat tries again, within the same lease.
          renewalErrors += 1;
        },
      );
    },
    Math.max(1, Math.floor(leaseMs / 3)),
  );
  try {
    const events = await computeEventsOffThread({
      olderFile: file,
      newerFile: release.file,
      entries: await store.listWatchEntries(),
    });
    if (lost) return { status: 'lost', previous, renewalErrors };
    const inserted = await store.insertWatchEvents(events, now());
    if (!(await store.finishWatchRun(release.id, owner, events.length, now())))
      return { status: 'lost', previous, renewalErrors };
    return { status: 'computed', previous, events: events.length, inserted, ms: performance.now() - started };
  } finally {
    clearInterval(heartbeat);
  }
}
