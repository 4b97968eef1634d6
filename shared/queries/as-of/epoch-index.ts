/**
 * The segment tables of an older epoch in memory (docs/decisions/0034-as-of-epoch-index.md): which
 * provider ranges and which asn_range row hold an address at epoch e becomes a binary search, as
 * range-index.ts does for the release's own tables, instead of two SQL seeks over the versioned
 * segments (`provider_segment_hist`, `asn_segment_hist`, valid at e).
 *
 * An epoch's index is built on its first as-of lookup, in the background (chunks, yielding between
 * them); until it is ready the SQL path answers. At most MAX_EPOCHS indexes are kept per release
 * (least recently used dropped), one built at a time. The newest epoch needs none: the release's
 * own tables answer it. Nothing else reads this module's state; the SQL path gives the same answers
 * (test/shared/as-of-epoch-index.test.ts).
 */
import type Database from 'better-sqlite3';
import { validAtSql } from '../../as-of-symbols.js';
import { ipKey, type Ip } from '../../ip.js';
import { nowEpoch } from '../../time.js';
import { RangeIndexBuilder, type FamilyCounts, type RangeIndex } from '../range-index.js';
import { ReleaseSlot, type Release } from '../release.js';
import { resolveAsOf, type Epoch } from './common.js';

/** One epoch's segments: provider segments with their range hids, asn segments with their range hid. */
export interface EpochSegments {
  provider: { index: RangeIndex; offsets: Uint32Array; hids: Uint32Array };
  asn: { index: RangeIndex; hids: Uint32Array };
  /** Bytes of the typed arrays held. */
  bytes: number;
}

/** Epoch indexes kept per release (about 12 MB each on the bench release of 600k asn segments). */
export const MAX_EPOCHS = 3;

/** What a release's epoch indexes have done, for tests and the decision record's figures. */
export interface EpochIndexStats {
  /** Lookups answered from an index. */
  hits: number;
  /** Lookups at an older epoch answered by SQL (its index not ready). */
  misses: number;
  /** Indexes built. */
  built: number;
}

class EpochIndexes {
  /** Ready indexes by epoch number, least recently used first. */
  readonly ready = new Map<number, EpochSegments>();
  /** The epoch being built, with its promise. */
  building: { epoch: number; done: Promise<void> } | null = null;
  readonly stats: EpochIndexStats = { hits: 0, misses: 0, built: 0 };
}

const INDEXES = new ReleaseSlot('as-of epoch segment indexes', () => new EpochIndexes());

/** The index of `epoch` when ready (its build started otherwise): undefined until then. */
function segmentsAt(release: Release, epoch: Epoch): EpochSegments | undefined {
  const indexes = INDEXES.of(release);
  const ready = indexes.ready.get(epoch.epoch);
  if (ready !== undefined) {
    if (indexes.ready.size > 1) {
      indexes.ready.delete(epoch.epoch);
      indexes.ready.set(epoch.epoch, ready);
    }
    indexes.stats.hits++;
    return ready;
  }
  indexes.stats.misses++;
  if (indexes.building === null) void build(release, indexes, epoch);
  return undefined;
}

/**
 * The provider range hids holding the address at `epoch` (most specific first) and its asn_range
 * hid (null: none), from the epoch's index; undefined while the index is not ready (ask SQL).
 */
export function segmentHidsAt(
  release: Release,
  epoch: Epoch,
  ip: Ip,
): { ranges: ArrayLike<number>; asnRange: number | null } | undefined {
  const segments = segmentsAt(release, epoch);
  if (segments === undefined) return undefined;
  const p = segments.provider;
  const at = p.index.find(ip);
  const a = segments.asn.index.find(ip);
  return {
    ranges: at < 0 ? EMPTY : p.hids.subarray(p.offsets[at], p.offsets[at + 1]),
    asnRange: a < 0 ? null : segments.asn.hids[a]!,
  };
}

const EMPTY = new Uint32Array(0);

function build(release: Release, indexes: EpochIndexes, epoch: Epoch): Promise<void> {
  const done = (async () => {
    // Not in the request that asked: it is answered by SQL first.
    await new Promise((resolve) => setImmediate(resolve));
    const segments = await loadEpochSegments(release.db, epoch.epoch);
    indexes.ready.set(epoch.epoch, segments);
    indexes.stats.built++;
    while (indexes.ready.size > MAX_EPOCHS) indexes.ready.delete(indexes.ready.keys().next().value!);
  })()
    .catch(() => {
      // The release closed while loading (a newer one is served), or it cannot be read: SQL answers.
    })
    .finally(() => {
      indexes.building = null;
    });
  indexes.building = { epoch: epoch.epoch, done };
  return done;
}

/**
 * Builds the index of the epoch answering at `asOf` (no-op for the newest epoch) and waits for it:
 * for benchmarks and tests, which would otherwise answer by SQL until it is ready.
 */
export async function warmAsOf(release: Release, asOf: string | number, now = nowEpoch()): Promise<void> {
  const resolved = resolveAsOf(release, asOf, now);
  if (resolved.newest) return;
  const indexes = INDEXES.of(release);
  while (!indexes.ready.has(resolved.epoch.epoch)) {
    if (indexes.building === null) void build(release, indexes, resolved.epoch);
    const before = indexes.stats.built;
    await indexes.building!.done;
    if (indexes.stats.built === before && indexes.building === null && !indexes.ready.has(resolved.epoch.epoch))
      throw new Error(`the index of epoch ${resolved.epoch.epoch} could not be built`);
  }
}

/** The release's epoch index counters and the epochs held (for tests). */
export function epochIndexStats(release: Release): EpochIndexStats & { epochs: number[]; bytes: number[] } {
  const indexes = INDEXES.of(release);
  return {
    ...indexes.stats,
    epochs: [...indexes.ready.keys()],
    bytes: [...indexes.ready.values()].map((s) => s.bytes),
  };
}

// --- loading ------------------------------------------------------------------------------------

const CHUNK = 20_000;
const VALID = validAtSql('?');
const MAPPED_FIRST = ipKey(4, 0n);
const MAPPED_LAST = ipKey(4, 0xffffffffn);

/**
 * Reads the rows of a segment table valid at `epoch` in `first` order (one per first: an epoch's
 * segments do not overlap), CHUNK rows per statement with a yield between chunks, as range-index.ts
 * reads the release's own tables. `columns` begins with first.
 */
async function readValid<R extends [Buffer, ...unknown[]]>(
  db: Database.Database,
  table: string,
  columns: string,
  epoch: number,
  each: (row: R) => void,
): Promise<void> {
  const head = db.prepare(`SELECT ${columns} FROM ${table} WHERE ${VALID} ORDER BY first LIMIT ?`).raw();
  const next = db
    .prepare(`SELECT ${columns} FROM ${table} WHERE first > ? AND ${VALID} ORDER BY first LIMIT ?`)
    .raw();
  let after: Buffer | undefined;
  for (;;) {
    let read = 0;
    const rows = (
      after === undefined ? head.iterate(epoch, epoch, CHUNK) : next.iterate(after, epoch, epoch, CHUNK)
    ) as IterableIterator<R>;
    for (const row of rows) {
      each(row);
      after = row[0];
      read++;
    }
    if (read < CHUNK) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function familyCounts(db: Database.Database, table: string, epoch: number): FamilyCounts {
  const [total, v4] = db
    .prepare(`SELECT count(*), count(*) FILTER (WHERE first BETWEEN ? AND ?) FROM ${table} WHERE ${VALID}`)
    .raw()
    .get(MAPPED_FIRST, MAPPED_LAST, epoch, epoch) as [number, number];
  return { v4, v6: total - v4 };
}

export async function loadEpochSegments(db: Database.Database, epoch: number): Promise<EpochSegments> {
  const pCounts = familyCounts(db, 'provider_segment_hist', epoch);
  const hidCount = db
    .prepare(`SELECT coalesce(sum(json_array_length(range_hids)), 0) FROM provider_segment_hist WHERE ${VALID}`)
    .pluck()
    .get(epoch, epoch) as number;
  const pIndex = new RangeIndexBuilder(pCounts);
  const offsets = new Uint32Array(pCounts.v4 + pCounts.v6 + 1);
  const pHids = new Uint32Array(hidCount);
  let at = 0;
  await readValid<[Buffer, Buffer, string]>(db, 'provider_segment_hist', 'first, last, range_hids', epoch, (r) => {
    offsets[pIndex.rows] = at;
    pIndex.add(r[0], r[1]);
    for (const hid of JSON.parse(r[2]) as number[]) {
      if (at === hidCount) throw new Error(`provider_segment_hist: more range hids than the ${hidCount} counted`);
      pHids[at++] = hid;
    }
  });
  if (at !== hidCount) throw new Error(`provider_segment_hist: read ${at} range hids, counted ${hidCount}`);
  offsets[pIndex.rows] = at;

  const aCounts = familyCounts(db, 'asn_segment_hist', epoch);
  const aIndex = new RangeIndexBuilder(aCounts);
  const aHids = new Uint32Array(aCounts.v4 + aCounts.v6);
  await readValid<[Buffer, Buffer, number]>(db, 'asn_segment_hist', 'first, last, range_hid', epoch, (r) => {
    aHids[aIndex.rows] = r[2];
    aIndex.add(r[0], r[1]);
  });
  // Per segment: start and end (4 bytes each per IPv4 segment, 16 per IPv6), its row position, and
  // the provider hids and offsets / the asn hid.
  const segmentBytes = (c: FamilyCounts) => c.v4 * 12 + c.v6 * 36;
  const bytes =
    segmentBytes(pCounts) + offsets.byteLength + pHids.byteLength + segmentBytes(aCounts) + aHids.byteLength;
  return {
    provider: { index: pIndex.build(), offsets, hids: pHids },
    asn: { index: aIndex.build(), hids: aHids },
    bytes,
  };
}
