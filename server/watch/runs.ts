/**
 * Computing a release's events once (docs/decisions/0034): the caller that takes the run's lease
 * in the accounts store diffs the release against the chain's previous head (its file in the
 * releases directory), inserts the events (idempotent: same ids every time) and marks the run
 * done. Any process may call this for the release it now serves; only one computes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AccountsStore } from '../../accounts/index.js';
import { SETTINGS } from '../../shared/config.js';
import { openRelease, type Release } from '../../shared/queries/index.js';
import { computeWatchEvents } from './compute.js';
import { WatchIndex } from './subjects.js';

/** WATCH_RUN_LEASE_MS's default: how long a computation may take before another process may redo it. */
export const RUN_LEASE_MS = SETTINGS.WATCH_RUN_LEASE_MS.schema.parse(undefined);

export type RunOutcome =
  | { status: 'skipped' }
  /** Another process holds the lease: it computes, unless it dies first (ask again later). */
  | { status: 'held' }
  | { status: 'started_chain' }
  | { status: 'computed'; previous: string; events: number; inserted: number; ms: number }
  | { status: 'missing_previous'; previous: string };

export async function computeReleaseEvents(
  store: AccountsStore,
  releasesDir: string,
  release: Release,
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
  const older = openRelease(file);
  try {
    const index = new WatchIndex(await store.listWatchEntries());
    const events = await computeWatchEvents(older, release, index);
    const inserted = await store.insertWatchEvents(events, now());
    await store.finishWatchRun(release.id, owner, events.length, now());
    return { status: 'computed', previous, events: events.length, inserted, ms: performance.now() - started };
  } finally {
    older.close();
  }
}
