/**
 * The segment tables of an older epoch in memory (docs/decisions/0035-as-of-epoch-index.md): which
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
import { rangeItemsInMemory, type RangePage } from '../lookup-asn.js';
import { RangeIndexBuilder, type FamilyCounts, type RangeIndex } from '../range-index.js';
import { ReleaseSlot, type Release } from '../release.js';
import { resolveAsOf, type Epoch } from './common.js';

/**
 * One epoch's segments: provider segments with their range hids, asn segments with their range
 * hid; and the pages of each AS's ranges (GET /v1/asn/{asn}).
 */
export interface EpochSegments {
  provider: { index: RangeIndex; offsets: Uint32Array; hids: Uint32Array };
  asn: { index: RangeIndex; hids: Uint32Array };
  pages: AsnPages;
  /** Bytes of the typed arrays held. */
  bytes: number;
}

/**
 * The asn_range versions of each AS valid at the epoch, in page order (version, first, last DESC,
 * ord: the order of asn_range_hist_by_asn): those of AS asnKeys[i] are hids[starts[i] .. starts[i + 1]).
 */
export interface AsnPages {
  asnKeys: Float64Array;
  starts: Uint32Array;
  hids: Uint32Array;
}

/** First and last address of every asn_range_hist version (any epoch), by hid: words [4 hid .. 4 hid + 3]. */
export interface RangeWords {
  firstWords: Uint32Array;
  lastWords: Uint32Array;
}

/**
 * Epoch indexes kept per release: 22 MB each on the bench release (600k asn segments, 157k
 * provider segments, 573k asn_range versions), besides the 18 MB of RangeWords they share.
 */
export const MAX_EPOCHS = 2;

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
  /** Every asn_range version's addresses, loaded with the first epoch index. */
  words: RangeWords | null = null;
  /** The epoch being built, with its promise. */
  building: { epoch: number; done: Promise<void> } | null = null;
  readonly stats: EpochIndexStats = { hits: 0, misses: 0, built: 0 };
  /** No indexes: the SQL path answers every lookup (sqlOnly; tests and benchmarks). */
  sqlOnly = false;
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
  if (indexes.building === null && !indexes.sqlOnly) void build(release, indexes, epoch);
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

/**
 * The page of `asn`'s ranges at `epoch` after the first `after` (the as-of cursor key: ranges served
 * before), from the epoch's index; `next`: the key of the page after (null: last page); undefined
 * while the index is not ready (ask SQL).
 */
export function asnPageAt(
  release: Release,
  epoch: Epoch,
  asn: number,
  after: number,
  limit: number,
): { ranges: RangePage['ranges']; next: number | null } | undefined {
  const segments = segmentsAt(release, epoch);
  const words = INDEXES.of(release).words;
  if (segments === undefined || words === null) return undefined;
  const { asnKeys, starts, hids } = segments.pages;
  let lo = 0;
  let hi = asnKeys.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = asnKeys[mid]!;
    if (k === asn) {
      found = mid;
      break;
    }
    if (k < asn) lo = mid + 1;
    else hi = mid - 1;
  }
  if (found < 0) return { ranges: [], next: null };
  const rows = hids.subarray(starts[found], starts[found + 1]);
  const from = Math.min(after, rows.length);
  const end = Math.min(rows.length, from + limit);
  return {
    ranges: rangeItemsInMemory(words.firstWords, words.lastWords, rows, from, end),
    next: end < rows.length ? end : null,
  };
}

function build(release: Release, indexes: EpochIndexes, epoch: Epoch): Promise<void> {
  const done = (async () => {
    // Not in the request that asked: it is answered by SQL first.
    await new Promise((resolve) => setImmediate(resolve));
    indexes.words ??= await loadRangeWords(release.db);
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
    if (
      indexes.stats.built === before &&
      indexes.building === null &&
      !indexes.ready.has(resolved.epoch.epoch)
    )
      throw new Error(`the index of epoch ${resolved.epoch.epoch} could not be built`);
  }
}

/** Builds no epoch index on `release`: every as-of lookup by SQL (to compare the two paths). */
export function sqlOnly(release: Release): void {
  INDEXES.of(release).sqlOnly = true;
}

/** The release's epoch index counters and the epochs held (for tests). */
export function epochIndexStats(
  release: Release,
): EpochIndexStats & { epochs: number[]; bytes: number[]; wordsBytes: number } {
  const indexes = INDEXES.of(release);
  const words = indexes.words;
  return {
    ...indexes.stats,
    epochs: [...indexes.ready.keys()],
    bytes: [...indexes.ready.values()].map((s) => s.bytes),
    wordsBytes: words === null ? 0 : words.firstWords.byteLength + words.lastWords.byteLength,
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
    .prepare(
      `SELECT coalesce(sum(json_array_length(range_hids)), 0) FROM provider_segment_hist WHERE ${VALID}`,
    )
    .pluck()
    .get(epoch, epoch) as number;
  const pIndex = new RangeIndexBuilder(pCounts);
  const offsets = new Uint32Array(pCounts.v4 + pCounts.v6 + 1);
  const pHids = new Uint32Array(hidCount);
  let at = 0;
  await readValid<[Buffer, Buffer, string]>(
    db,
    'provider_segment_hist',
    'first, last, range_hids',
    epoch,
    (r) => {
      offsets[pIndex.rows] = at;
      pIndex.add(r[0], r[1]);
      for (const hid of JSON.parse(r[2]) as number[]) {
        if (at === hidCount)
          throw new Error(`provider_segment_hist: more range hids than the ${hidCount} counted`);
        pHids[at++] = hid;
      }
    },
  );
  if (at !== hidCount) throw new Error(`provider_segment_hist: read ${at} range hids, counted ${hidCount}`);
  offsets[pIndex.rows] = at;

  const aCounts = familyCounts(db, 'asn_segment_hist', epoch);
  const aIndex = new RangeIndexBuilder(aCounts);
  const aHids = new Uint32Array(aCounts.v4 + aCounts.v6);
  await readValid<[Buffer, Buffer, number]>(db, 'asn_segment_hist', 'first, last, range_hid', epoch, (r) => {
    aHids[aIndex.rows] = r[2];
    aIndex.add(r[0], r[1]);
  });
  const pages = await loadAsnPages(db, epoch);
  // Per segment: start and end (4 bytes each per IPv4 segment, 16 per IPv6), its row position, and
  // the provider hids and offsets / the asn hid.
  const segmentBytes = (c: FamilyCounts) => c.v4 * 12 + c.v6 * 36;
  const bytes =
    segmentBytes(pCounts) +
    offsets.byteLength +
    pHids.byteLength +
    segmentBytes(aCounts) +
    aHids.byteLength +
    pages.asnKeys.byteLength +
    pages.starts.byteLength +
    pages.hids.byteLength;
  return {
    provider: { index: pIndex.build(), offsets, hids: pHids },
    asn: { index: aIndex.build(), hids: aHids },
    pages,
    bytes,
  };
}

/** Every asn_range_hist version's first and last address by hid (hid order, CHUNK rows a statement). */
async function loadRangeWords(db: Database.Database): Promise<RangeWords> {
  const maxHid = (db.prepare(`SELECT coalesce(max(hid), 0) FROM asn_range_hist`).pluck().get() as number) + 1;
  const firstWords = new Uint32Array(maxHid * 4);
  const lastWords = new Uint32Array(maxHid * 4);
  const read = db
    .prepare(`SELECT hid, first, last FROM asn_range_hist WHERE hid > ? ORDER BY hid LIMIT ?`)
    .raw();
  for (let after = 0; ;) {
    let count = 0;
    for (const [hid, first, last] of read.iterate(after, CHUNK) as IterableIterator<
      [number, Buffer, Buffer]
    >) {
      for (let w = 0; w < 4; w++) {
        firstWords[hid * 4 + w] = first.readUInt32BE(w * 4);
        lastWords[hid * 4 + w] = last.readUInt32BE(w * 4);
      }
      after = hid;
      count++;
    }
    if (count < CHUNK) return { firstWords, lastWords };
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The routed asn_range versions valid at `epoch`, grouped by AS in page order (the index
 * asn_range_hist_by_asn). Read by AS: CHUNK rows a statement from an AS on, the last AS of a full
 * chunk read again by the next (an AS of more than CHUNK rows on its own).
 */
async function loadAsnPages(db: Database.Database, epoch: number): Promise<AsnPages> {
  const [rowCount, asnCount] = db
    .prepare(`SELECT count(*), count(DISTINCT asn) FROM asn_range_hist WHERE asn IS NOT NULL AND ${VALID}`)
    .raw()
    .get(epoch, epoch) as [number, number];
  const asnKeys = new Float64Array(asnCount);
  const starts = new Uint32Array(asnCount + 1);
  const hids = new Uint32Array(rowCount);
  const order = `ORDER BY asn, version, first, last DESC, ord`;
  const from = db
    .prepare(
      `SELECT asn, hid FROM asn_range_hist INDEXED BY asn_range_hist_by_asn
         WHERE asn >= ? AND ${VALID} ${order} LIMIT ?`,
    )
    .raw();
  const one = db
    .prepare(
      `SELECT asn, hid FROM asn_range_hist INDEXED BY asn_range_hist_by_asn WHERE asn = ? AND ${VALID} ${order}`,
    )
    .raw();
  let at = 0;
  let keys = 0;
  const take = (rows: Array<[number, number]>) => {
    for (const [asn, hid] of rows) {
      if (keys === 0 || asnKeys[keys - 1] !== asn) {
        if (keys === asnCount) throw new Error(`asn_range_hist: more ASes than the ${asnCount} counted`);
        asnKeys[keys] = asn;
        starts[keys++] = at;
      }
      if (at === rowCount) throw new Error(`asn_range_hist: more rows than the ${rowCount} counted`);
      hids[at++] = hid;
    }
  };
  for (let next = 0; ;) {
    const rows = from.all(next, epoch, epoch, CHUNK) as Array<[number, number]>;
    if (rows.length < CHUNK) {
      take(rows);
      break;
    }
    // The last AS of a full chunk may go on: read again from it.
    const lastAsn = rows[rows.length - 1]![0];
    let keep = rows.length;
    while (keep > 0 && rows[keep - 1]![0] === lastAsn) keep--;
    if (keep > 0) {
      take(rows.slice(0, keep));
      next = lastAsn;
    } else {
      take(one.all(lastAsn, epoch, epoch) as Array<[number, number]>);
      next = lastAsn + 1;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (at !== rowCount || keys !== asnCount)
    throw new Error(`asn_range_hist: read ${at} rows of ${keys} ASes, counted ${rowCount} of ${asnCount}`);
  starts[keys] = at;
  return { asnKeys, starts, hids };
}
