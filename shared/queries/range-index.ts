/**
 * The range tables of a release (asn_range, provider_segment) as sorted typed arrays, loaded once
 * per release: "which range holds this address" becomes a binary search in memory instead of an
 * SQL seek (NOTES.md: ~5.5M lookups/s for a sorted Uint32Array). IPv4 ranges are kept as 32-bit
 * numbers; IPv6 ranges as four 32-bit words compared in order.
 */
import type Database from 'better-sqlite3';
import type { Ip } from '../ip.js';

/** A growable Uint32Array. */
class Words {
  data = new Uint32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  done(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}

/** Collects ranges in key order without keeping a JS object per row (a release has ~700k). */
export class RangeIndexBuilder {
  private readonly v4Starts = new Words();
  private readonly v4Ends = new Words();
  private readonly v4Rows = new Words();
  private readonly v6Starts = new Words();
  private readonly v6Ends = new Words();
  private readonly v6Rows = new Words();
  rows = 0;

  add(first: Buffer, last: Buffer): void {
    const row = this.rows++;
    if (isMapped(first)) {
      this.v4Starts.push(first.readUInt32BE(12));
      this.v4Ends.push(isMapped(last) ? last.readUInt32BE(12) : 0xffffffff);
      this.v4Rows.push(row);
    } else {
      for (let w = 0; w < 4; w++) {
        this.v6Starts.push(first.readUInt32BE(w * 4));
        this.v6Ends.push(last.readUInt32BE(w * 4));
      }
      this.v6Rows.push(row);
    }
  }

  build(): RangeIndex {
    return new RangeIndex(
      this.v4Starts.done(),
      this.v4Ends.done(),
      this.v4Rows.done(),
      this.v6Starts.done(),
      this.v6Ends.done(),
      this.v6Rows.done(),
    );
  }
}

/** Sorted, non-overlapping [first, last] ranges of one table, split by family; find() returns the row's position. */
export class RangeIndex {
  constructor(
    private readonly v4Starts: Uint32Array,
    private readonly v4Ends: Uint32Array,
    /** Positions (into the per-row arrays) of the IPv4 ranges. */
    private readonly v4Rows: Uint32Array,
    private readonly v6Starts: Uint32Array,
    private readonly v6Ends: Uint32Array,
    private readonly v6Rows: Uint32Array,
  ) {}

  /** Position of the row whose range holds the address, or -1. */
  find(ip: Ip): number {
    if (ip.version === 4) {
      const value = Number(ip.value);
      let lo = 0;
      let hi = this.v4Starts.length - 1;
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
 * Reads a table in key order, CHUNK rows at a time with a yield to the event loop between chunks,
 * so a server keeps answering (from SQL) while a new release's tables load. `sql(where)` selects
 * the key column first.
 */
async function readChunks<R extends unknown[]>(
  db: Database.Database,
  sql: (where: string) => string,
  keyColumn: string,
  each: (row: R) => void,
): Promise<void> {
  const first = db.prepare(sql('')).raw();
  const next = db.prepare(sql(`WHERE ${keyColumn} > ?`)).raw();
  let rows = first.all(CHUNK) as R[];
  for (;;) {
    for (const row of rows) each(row);
    if (rows.length < CHUNK) return;
    await new Promise((resolve) => setImmediate(resolve));
    rows = next.all(rows[rows.length - 1]![0], CHUNK) as R[];
  }
}

export async function loadAsnRanges(db: Database.Database): Promise<AsnRanges> {
  const asns: number[] = [];
  const firstWords = new Words();
  const lastWords = new Words();
  await readChunks<[number, Buffer, Buffer, number | null]>(
    db,
    (where) => `SELECT id, first, last, asn FROM asn_range ${where} ORDER BY id LIMIT ?`,
    'id',
    ([id, first, last, asn]) => {
      if (id !== asns.length + 1) throw new Error(`asn_range: expected id ${asns.length + 1}, found ${id}`);
      asns.push(asn ?? -1);
      for (let w = 0; w < 4; w++) {
        firstWords.push(first.readUInt32BE(w * 4));
        lastWords.push(last.readUInt32BE(w * 4));
      }
    },
  );
  const index = new RangeIndexBuilder();
  const segmentRows = new Words();
  await readChunks<[Buffer, Buffer, number]>(
    db,
    (where) => `SELECT first, last, range_id FROM asn_segment ${where} ORDER BY first LIMIT ?`,
    'first',
    ([first, last, rangeId]) => {
      index.add(first, last);
      segmentRows.push(rangeId - 1);
    },
  );
  const asnPerRow = Float64Array.from(asns);
  return {
    index: index.build(),
    segmentRows: segmentRows.done(),
    asns: asnPerRow,
    firstWords: firstWords.done(),
    lastWords: lastWords.done(),
    byAsn: groupByAsn(asnPerRow),
  };
}

export async function loadProviderSegments(db: Database.Database): Promise<ProviderSegments> {
  const index = new RangeIndexBuilder();
  const offsets = new Words();
  const ids = new Words();
  await readChunks<[Buffer, Buffer, string]>(
    db,
    (where) => `SELECT first, last, range_ids FROM provider_segment ${where} ORDER BY first LIMIT ?`,
    'first',
    ([first, last, rangeIds]) => {
      index.add(first, last);
      offsets.push(ids.length);
      for (const id of JSON.parse(rangeIds) as number[]) ids.push(id);
    },
  );
  offsets.push(ids.length);
  return { index: index.build(), offsets: offsets.done(), ids: ids.done() };
}
