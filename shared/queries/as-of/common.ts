/**
 * What the as-of queries share (docs/api.md#as-of-a-past-moment, docs/decisions/0033): the epochs of
 * a release (table `epoch`, one row per release kept, the newest last), the moment asked resolved to
 * the epoch that answered then, the blocks of an answer as of it, and the reading of versioned rows
 * (`*_hist`: valid at epoch e when e_from <= e and e_to is null or after e) and of symbolic times.
 */
import { ApiError } from '../../errors.js';
import { readEpoch, validAtSql, type Epoch as StoredEpoch, type EpochRow } from '../../as-of-symbols.js';
import { nowEpoch, parseInstant, toIso } from '../../time.js';
import { BoundedCache, requireRelease } from '../common.js';
import { ReleaseSlot, type Release } from '../release.js';

/** One release kept in the file's history, with its position (0: the oldest kept). */
export interface Epoch extends StoredEpoch {
  index: number;
}

/** A moment resolved: the epoch that answered then and the blocks of an answer as of it. */
export interface AsOf {
  /** The moment asked, epoch seconds. */
  at: number;
  epoch: Epoch;
  /** True: the epoch is the release itself (its current tables answer). */
  newest: boolean;
  blocks: {
    coverage: Record<string, unknown>;
    attribution: Release['attribution'];
    release: Release['release'];
  };
  /** What binds a cursor to the moment (appended to a query's identity). */
  cursorKey: string;
}

/** Versioned-row validity at the epoch bound twice after it (`?, ?`): e_from <= e < e_to. */
export const VALID_AT = validAtSql('?');

/** The release's epochs, oldest first; none when the file keeps no history. */
export const EPOCHS = new ReleaseSlot('epochs', (release): Epoch[] => {
  const has = release.db
    .prepare(`SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'epoch')`)
    .pluck()
    .get();
  if (has !== 1) return [];
  const rows = release.db
    .prepare(
      `SELECT epoch, release_id, built_at, dns_cut, round_from, round_to, coverage, attribution, source_dates
         FROM epoch ORDER BY epoch`,
    )
    .all() as EpochRow[];
  return rows.map((row, index) => ({ ...readEpoch(row), index }));
});

/**
 * The blocks of answers as of a moment, by moment: the JSON encoder keeps a response's blocks by
 * the identity of its coverage object (server/encoding/json.ts), so one moment asked again gets
 * the same objects.
 */
const AS_OF_BLOCKS = new ReleaseSlot('as-of blocks', () => new BoundedCache<number, AsOf>(4096));

/** Longest as_of text accepted (the parameter's schema: 40). */
const MAX_TEXT = 40;

function refuse(epochs: Epoch[], asOf: string | number, why: string, now: number): never {
  const shown = typeof asOf === 'number' ? String(asOf) : JSON.stringify(asOf.slice(0, MAX_TEXT));
  const range =
    epochs.length === 0
      ? 'this release keeps no history: omit as_of'
      : `send an ISO 8601 date or timestamp in UTC from ${toIso(epochs[0]!.builtAt)} (the oldest release kept) to now (${toIso(now)})`;
  throw new ApiError('as_of_out_of_range', `as_of ${shown} ${why}: ${range}`);
}

/**
 * The moment `asOf` (ISO 8601 text as the API takes it, or epoch seconds) resolved to the epoch
 * that answered then: the newest epoch built at or before it (at or after the newest release's
 * built_at: the newest). Malformed, in the future (after `now`) or before the oldest epoch kept:
 * as_of_out_of_range, naming the range accepted.
 */
export function resolveAsOf(releaseOrNull: Release | null, asOf: string | number, now = nowEpoch()): AsOf {
  const release = requireRelease(releaseOrNull);
  const epochs = EPOCHS.of(release);
  const at =
    typeof asOf === 'number'
      ? Number.isSafeInteger(asOf)
        ? asOf
        : null
      : asOf.length <= MAX_TEXT
        ? parseInstant(asOf)
        : null;
  if (at === null) return refuse(epochs, asOf, 'is not an ISO 8601 date or timestamp in UTC', now);
  if (epochs.length === 0) return refuse(epochs, asOf, 'cannot be answered', now);
  if (at > now) return refuse(epochs, asOf, 'is in the future', now);
  if (at < epochs[0]!.builtAt) return refuse(epochs, asOf, 'is before the oldest release kept', now);
  const cache = AS_OF_BLOCKS.of(release);
  const kept = cache.get(at);
  if (kept !== undefined) return kept;
  // The newest epoch built at or before `at` (epochs ascend by built_at).
  let lo = 0;
  let hi = epochs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (epochs[mid]!.builtAt <= at) lo = mid;
    else hi = mid - 1;
  }
  const epoch = epochs[lo]!;
  const resolved: AsOf = {
    at,
    epoch,
    newest: lo === epochs.length - 1,
    blocks: {
      coverage: { ...epoch.coverage, as_of: toIso(at) },
      attribution: epoch.attribution as Release['attribution'],
      release: release.release,
    },
    cursorKey: `\0as_of\0${at}`,
  };
  cache.set(at, resolved);
  return resolved;
}

/**
 * The answer of a current query with the blocks of `asOf` in place of the release's (same keys, same
 * order: the blocks come last in every answer).
 */
export function withBlocks<T extends { coverage: unknown; attribution: unknown; release: unknown }>(
  answer: T,
  asOf: AsOf,
): T {
  return { ...answer, ...asOf.blocks };
}
