/**
 * The range tables of a release (asn_range, provider_segment) as sorted typed arrays, loaded once
 * per release: "which range holds this address" becomes a binary search in memory instead of an
 * SQL seek (on a 2-core machine with Node 20.20, a binary search over 700k IPv4 ranges in a sorted
 * Uint32Array did ~5.5M lookups/s, loaded in 0.6 s into 5.3 MiB). IPv4 ranges are kept as 32-bit
 * numbers; IPv6 ranges as four 32-bit words compared in order.
 */
import type Database from 'better-sqlite3';
import { ipKey, type Ip } from '../ip.js';

/**
 * Collects ranges in key order into typed arrays of the sizes counted beforehand: no JS object per
 * row (a release has ~600k segments), no array grown by doubling and copied to its length at the
 * end. With growing arrays and a chunk's rows read at once, a server's RSS was 388 MB once the
 * full-scale release had loaded; with these, 209 MB (CHANGELOG, 2026-11-26).
 */
export class RangeIndexBuilder {
  private readonly v4Starts: Uint32Array;
  private readonly v4Ends: Uint32Array;
  private readonly v4Rows: Uint32Array;
  private readonly v6Starts: Uint32Array;
  private readonly v6Ends: Uint32Array;
  private readonly v6Rows: Uint32Array;
  private v4 = 0;
  private v6 = 0;
  rows = 0;

  /** `counts`: how many ranges start with an IPv4-mapped key, and how many with another. */
  constructor(private readonly counts: FamilyCounts) {
    this.v4Starts = new Uint32Array(counts.v4);
    this.v4Ends = new Uint32Array(counts.v4);
    this.v4Rows = new Uint32Array(counts.v4);
    this.v6Starts = new Uint32Array(counts.v6 * 4);
    this.v6Ends = new Uint32Array(counts.v6 * 4);
    this.v6Rows = new Uint32Array(counts.v6);
  }

  add(first: Buffer, last: Buffer): void {
    if (isMapped(first)) {
      if (this.v4 === this.counts.v4) throw new Error(`more IPv4 ranges than the ${this.counts.v4} counted`);
      const row = this.rows++;
      this.v4Starts[this.v4] = first.readUInt32BE(12);
      this.v4Ends[this.v4] = isMapped(last) ? last.readUInt32BE(12) : 0xffffffff;
      this.v4Rows[this.v4++] = row;
    } else {
      if (this.v6 === this.counts.v6) throw new Error(`more IPv6 ranges than the ${this.counts.v6} counted`);
      const row = this.rows++;
      for (let w = 0; w < 4; w++) {
        this.v6Starts[this.v6 * 4 + w] = first.readUInt32BE(w * 4);
        this.v6Ends[this.v6 * 4 + w] = last.readUInt32BE(w * 4);
      }
      this.v6Rows[this.v6++] = row;
    }
  }

  build(): RangeIndex {
    if (this.v4 !== this.counts.v4 || this.v6 !== this.counts.v6) {
      throw new Error(
        `read ${this.v4} IPv4 and ${this.v6} IPv6 ranges, counted ${this.counts.v4} and ${this.counts.v6}`,
      );
    }
    return new RangeIndex(this.v4Starts, this.v4Ends, this.v4Rows, this.v6Starts, this.v6Ends, this.v6Rows);
  }
}

/**
 * Sorted, non-overlapping [first, last] ranges of one table, split by family; find() returns the
 * row's position. An IPv4 search starts from its /16: where the ranges starting in each /16 begin
 * (256 KB) narrows the binary search to the few of its /16, instead of about twenty halvings of the
 * whole table, most of them cache misses in a server (3.7 % of its busy time in the peer section's
 * profile: docs/decisions/0038).
 */
export class RangeIndex {
  /** The ranges starting in /16 number k are v4Starts[v4Slash16[k] .. v4Slash16[k + 1]). */
  private readonly v4Slash16 = new Uint32Array(65_537);

  constructor(
    private readonly v4Starts: Uint32Array,
    private readonly v4Ends: Uint32Array,
    /** Positions (into the per-row arrays) of the IPv4 ranges. */
    private readonly v4Rows: Uint32Array,
    private readonly v6Starts: Uint32Array,
    private readonly v6Ends: Uint32Array,
    private readonly v6Rows: Uint32Array,
  ) {
    const slash16 = this.v4Slash16;
    for (let i = 0; i < v4Starts.length; i++) slash16[(v4Starts[i]! >>> 16) + 1]! += 1;
    for (let k = 0; k < 65_536; k++) slash16[k + 1]! += slash16[k]!;
  }

  /** Position of the row whose range holds the address, or -1. */
  find(ip: Ip): number {
    if (ip.version === 4) {
      const value = Number(ip.value);
      // The last range starting at or before the address is one of its /16's, or the one before.
      const k = value >>> 16;
      let lo = this.v4Slash16[k]!;
      let hi = this.v4Slash16[k + 1]! - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        if (this.v4Starts[mid]! <= value) lo = mid + 1;
        else hi = mid - 1;
      }
      return hi >= 0 && value <= this.v4Ends[hi]! ? this.v4Rows[hi]! : -1;
    }
    const words = [
      Number((ip.value >> 96n) & 0xffffffffn),
      Number((ip.value >> 64n) & 0xffffffffn),
      Number((ip.value >> 32n) & 0xffffffffn),
      Number(ip.value & 0xffffffffn),
    ];
    let lo = 0;
    let hi = this.v6Rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compareWords(this.v6Starts, mid, words) <= 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && compareWords(this.v6Ends, hi, words) >= 0 ? this.v6Rows[hi]! : -1;
  }
}

function isMapped(key: Buffer): boolean {
  return key.readUInt32BE(0) === 0 && key.readUInt32BE(4) === 0 && key.readUInt32BE(8) === 0xffff;
}

/** Sign of (array[at*4 .. at*4+3] - words). */
function compareWords(array: Uint32Array, at: number, words: number[]): number {
  for (let w = 0; w < 4; w++) {
    const a = array[at * 4 + w]!;
    const b = words[w]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

/**
 * The layered IP-to-ASN mapping in memory: asn_segment as an index (a segment's position gives the
 * asn_range row answering there) and per asn_range row (position = id - 1) its AS number and ends.
 */
export interface AsnRanges {
  index: RangeIndex;
  /** Per segment position, the asn_range row position answering there. */
  segmentRows: Uint32Array;
  /** AS number per row; -1 for "not routed" (NULL). */
  asns: Float64Array;
  /** The 16-byte `first` of row i is firstWords[4i .. 4i+3]. */
  firstWords: Uint32Array;
  /** The 16-byte `last` of row i is lastWords[4i .. 4i+3]. */
  lastWords: Uint32Array;
  /** The routed rows of each AS (GET /v1/asn/{asn}), see AsnRows. */
  byAsn: AsnRows;
}

/**
 * The rows of each AS in the order of its ranges on GET /v1/asn/{asn} (id order: IPv4 first, then
 * IPv6, each by first address): the rows of AS asnKeys[i] are rows[starts[i] .. starts[i + 1]).
 */
export interface AsnRows {
  /** Distinct AS numbers, ascending. */
  asnKeys: Float64Array;
  starts: Uint32Array;
  rows: Uint32Array;
}

/** The rows of `asn` (positions into AsnRanges' per-row arrays), empty when it routes nothing. */
export function rowsOfAsn(byAsn: AsnRows, asn: number): Uint32Array {
  const keys = byAsn.asnKeys;
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k === asn) return byAsn.rows.subarray(byAsn.starts[mid], byAsn.starts[mid + 1]);
    if (k < asn) lo = mid + 1;
    else hi = mid - 1;
  }
  return byAsn.rows.subarray(0, 0);
}

/** Groups the routed rows by AS (a counting sort: rows stay in id order within an AS). */
function groupByAsn(asns: Float64Array): AsnRows {
  const distinct = new Set<number>();
  for (const asn of asns) if (asn >= 0) distinct.add(asn);
  const asnKeys = Float64Array.from(distinct).sort();
  const slot = new Map<number, number>();
  asnKeys.forEach((asn, i) => slot.set(asn, i));
  const starts = new Uint32Array(asnKeys.length + 1);
  for (const asn of asns) if (asn >= 0) starts[slot.get(asn)! + 1]! += 1;
  for (let i = 0; i < asnKeys.length; i++) starts[i + 1]! += starts[i]!;
  const fill = starts.slice(0, asnKeys.length);
  const rows = new Uint32Array(starts[asnKeys.length]!);
  for (let row = 0; row < asns.length; row++) {
    const asn = asns[row]!;
    if (asn >= 0) rows[fill[slot.get(asn)!]!++] = row;
  }
  return { asnKeys, starts, rows };
}

/** The 16-byte key (shared/ip.ts ipKey) held in words[4 * row .. 4 * row + 3]. */
export function wordsKey(words: Uint32Array, row: number): Buffer {
  const key = Buffer.allocUnsafe(16);
  for (let w = 0; w < 4; w++) key.writeUInt32BE(words[row * 4 + w]!, w * 4);
  return key;
}

/** provider_segment in memory: the index plus each segment's range ids (most specific first). */
export interface ProviderSegments {
  index: RangeIndex;
  /** Range ids of segment i are ids[offsets[i] .. offsets[i + 1]). */
  offsets: Uint32Array;
  ids: Uint32Array;
}

const CHUNK = 20_000;

/**
 * Reads a table in key order, CHUNK rows per statement with a yield to the event loop between
 * chunks, so a server keeps answering (from SQL) while a new release's tables load. Rows are
 * visited one at a time (iterate, not all): a row's Buffers die before the next is read instead of
 * a chunk's worth living through young collections. `sql(where)` selects the key column first.
 */
async function readChunks<R extends unknown[]>(
  db: Database.Database,
  sql: (where: string) => string,
  keyColumn: string,
  each: (row: R) => void,
): Promise<void> {
  const first = db.prepare(sql('')).raw();
  const next = db.prepare(sql(`WHERE ${keyColumn} > ?`)).raw();
  let after: unknown;
  for (let chunk = 0; ; chunk++) {
    let read = 0;
    const rows = (chunk === 0 ? first.iterate(CHUNK) : next.iterate(after, CHUNK)) as IterableIterator<R>;
    for (const row of rows) {
      each(row);
      after = row[0];
      read++;
    }
    if (read < CHUNK) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** How many ranges of a table start with an IPv4-mapped key (::ffff:0:0/96), and how many with another. */
export interface FamilyCounts {
  v4: number;
  v6: number;
}

/** The keys of 0.0.0.0 and 255.255.255.255: every IPv4-mapped key lies between them (isMapped). */
const MAPPED_FIRST = ipKey(4, 0n);
const MAPPED_LAST = ipKey(4, 0xffffffffn);

/** The family counts of a table keyed by `first` (the sizes of its RangeIndexBuilder). */
function familyCounts(db: Database.Database, table: string): FamilyCounts {
  const [total, v4] = db
    .prepare(`SELECT count(*), count(*) FILTER (WHERE first BETWEEN ? AND ?) FROM ${table}`)
    .raw()
    .get(MAPPED_FIRST, MAPPED_LAST) as [number, number];
  return { v4, v6: total - v4 };
}

export async function loadAsnRanges(db: Database.Database): Promise<AsnRanges> {
  const rows = db.prepare(`SELECT count(*) FROM asn_range`).pluck().get() as number;
  const asns = new Float64Array(rows);
  const firstWords = new Uint32Array(rows * 4);
  const lastWords = new Uint32Array(rows * 4);
  let row = 0;
  await readChunks<[number, Buffer, Buffer, number | null]>(
    db,
    (where) => `SELECT id, first, last, asn FROM asn_range ${where} ORDER BY id LIMIT ?`,
    'id',
    ([id, first, last, asn]) => {
      if (id !== row + 1) throw new Error(`asn_range: expected id ${row + 1}, found ${id}`);
      asns[row] = asn ?? -1;
      for (let w = 0; w < 4; w++) {
        firstWords[row * 4 + w] = first.readUInt32BE(w * 4);
        lastWords[row * 4 + w] = last.readUInt32BE(w * 4);
      }
      row++;
    },
  );
  if (row !== rows) throw new Error(`asn_range: read ${row} rows, counted ${rows}`);
  const counts = familyCounts(db, 'asn_segment');
  const index = new RangeIndexBuilder(counts);
  const segmentRows = new Uint32Array(counts.v4 + counts.v6);
  await readChunks<[Buffer, Buffer, number]>(
    db,
    (where) => `SELECT first, last, range_id FROM asn_segment ${where} ORDER BY first LIMIT ?`,
    'first',
    ([first, last, rangeId]) => {
      segmentRows[index.rows] = rangeId - 1;
      index.add(first, last);
    },
  );
  return { index: index.build(), segmentRows, asns, firstWords, lastWords, byAsn: groupByAsn(asns) };
}

export async function loadProviderSegments(db: Database.Database): Promise<ProviderSegments> {
  const counts = familyCounts(db, 'provider_segment');
  const idCount = db
    .prepare(`SELECT coalesce(sum(json_array_length(range_ids)), 0) FROM provider_segment`)
    .pluck()
    .get() as number;
  const index = new RangeIndexBuilder(counts);
  const offsets = new Uint32Array(counts.v4 + counts.v6 + 1);
  const ids = new Uint32Array(idCount);
  let at = 0;
  await readChunks<[Buffer, Buffer, string]>(
    db,
    (where) => `SELECT first, last, range_ids FROM provider_segment ${where} ORDER BY first LIMIT ?`,
    'first',
    ([first, last, rangeIds]) => {
      offsets[index.rows] = at;
      index.add(first, last);
      for (const id of JSON.parse(rangeIds) as number[]) {
        if (at === idCount) throw new Error(`provider_segment: more range ids than the ${idCount} counted`);
        ids[at++] = id;
      }
    },
  );
  if (at !== idCount) throw new Error(`provider_segment: read ${at} range ids, counted ${idCount}`);
  offsets[index.rows] = at;
  return { index: index.build(), offsets, ids };
}
