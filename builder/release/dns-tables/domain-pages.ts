/**
 * domain_page: one row per domain keyed by its name, with its current states and the first page
 * of its intervals (docs/decisions/0022). Written by the worker thread in two steps:
 *
 * 1. pageStates(), while the main thread still reads the intervals: the names' order, and each
 *    domain's states as one JSON text made by SQLite from st.dns_state (read in its own name_id
 *    order, grouped per name, sorted into name order by SQLite's sorter) into temp.page_state,
 *    keyed by the domain's position in name order.
 * 2. writeDomainPages(), once the intervals are there: the rows in name order (appends to the
 *    WITHOUT ROWID table), the intervals' JSON made here from the typed arrays, the states taken
 *    by SQLite from temp.page_state by position (increasing: the next row of the same page).
 */
import type Database from 'better-sqlite3';
import { DOMAIN_PAGE_INTERVALS } from '../../../shared/release-schema.js';
import { RowWriter } from '../../row-writer.js';
import type { IntervalArrays } from './intervals.js';
import type { PackedText } from './packed-text.js';
import { orderByBytes } from './sort-ascii.js';

/** The names' order, for writeDomainPages. */
export interface PageOrder {
  /** Domain ids in name order. */
  ids: Int32Array;
  /** max(last_observed) of st.dns_state, null when it is empty (the meta's observation window). */
  lastObserved: number | null;
}

/**
 * Sorts the names (ids from firstId, in `names` order) and fills temp.page_state (pos, states)
 * for every domain with a DNS state; `nameToDomain`: dns_name id -> domain id.
 */
export function pageStates(
  db: Database.Database,
  names: PackedText,
  firstId: number,
  nameToDomain: Int32Array,
): PageOrder {
  const order = orderByBytes(names);
  const pos = new Int32Array(names.length);
  for (let p = 0; p < order.length; p++) pos[order[p]!] = p;
  const ids = order; // reused: index -> id in place
  for (let p = 0; p < ids.length; p++) ids[p] = ids[p]! + firstId;

  db.exec(`CREATE TEMP TABLE name_pos (name_id INTEGER PRIMARY KEY, pos INTEGER NOT NULL)`);
  const insert = new RowWriter(db, 2, (rows) => `INSERT INTO temp.name_pos (name_id, pos) VALUES ${rows}`);
  for (let nameId = 1; nameId < nameToDomain.length; nameId++) {
    const d = nameToDomain[nameId]!;
    if (d !== 0) insert.row(nameId, pos[d - firstId]);
  }
  insert.flush();
  db.exec(`CREATE TEMP TABLE page_state (pos INTEGER PRIMARY KEY, states TEXT NOT NULL)`);
  // As in the old dns_state table (the same sorter, on half as many rows): small caches keep the
  // memory down while the main thread reads the intervals. The state is the outer loop, read in
  // its key order (name_id, rtype), so each name's rows are grouped without a sort and come in
  // record-type order (an ORDER BY in group_concat took a second more; the tests check the order).
  // rtype and outcome are words of the vocabulary, vals and cnames JSON arrays already.
  const caches = [db.pragma('cache_size', { simple: true }), db.pragma('st.cache_size', { simple: true })];
  db.pragma('cache_size = -8192');
  db.pragma('st.cache_size = -8192');
  db.exec(`
    INSERT INTO temp.page_state (pos, states)
    SELECT m.pos, g.states FROM (
      SELECT name_id, '[' || group_concat('["' || rtype || '","' || outcome || '",' || vals || ',' || cnames || ','
        || last_observed || ',' || ifnull(last_confirmed, 'null') || ',' || ifnull(last_positive, 'null') || ']',
        ',') || ']' AS states
      FROM st.dns_state GROUP BY name_id
    ) g CROSS JOIN temp.name_pos m ON m.name_id = g.name_id
    ORDER BY m.pos;
    DROP TABLE temp.name_pos;
  `);
  const lastObserved = db.prepare(`SELECT max(last_observed) FROM st.dns_state`).pluck().get() as
    number | null;
  db.pragma(`cache_size = ${caches[0] as number}`);
  db.pragma(`st.cache_size = ${caches[1] as number}`);
  return { ids, lastObserved };
}

/**
 * Writes domain_page in name order: every domain of `order` (also those without states or
 * intervals: a name in the release is `observed`), its intervals from `iv` (in domain order).
 *
 * The names and the intervals' JSON are bytes bound as blobs, made text by SQL (CAST, a copy in
 * C): a string per row, per address and per time cost more than writing the rows (measured on
 * the full-scale bench: 6 s of JavaScript for 2 million rows with strings).
 */
export function writeDomainPages(
  db: Database.Database,
  order: PageOrder,
  names: PackedText,
  firstId: number,
  iv: IntervalArrays,
  values: PackedText,
): void {
  // Where each domain's intervals start (they are in domain order): start[d]..start[d + 1].
  const maxId = firstId + names.length;
  const start = new Int32Array(maxId + 1);
  for (let i = 0; i < iv.count; i++) start[iv.domain[i]! + 1]!++;
  for (let d = 1; d <= maxId; d++) start[d]! += start[d - 1]!;
  // Addresses are canonical text, put between quotes as they are; any that would need escapes
  // (none should) go through JSON.stringify.
  const safe = values.isJsonSafe();
  let longestValue = 0;
  for (let v = 0; v < values.length; v++) longestValue = Math.max(longestValue, values.byteLength(v));
  if (!safe) longestValue = longestValue * 6 + 2;
  // An interval: ["AAAA","value",t,t,t] with times of at most 21 characters each.
  const intervalBytes = 12 + longestValue + 3 * 22;
  const insert = new RowWriter(
    db,
    6,
    (rows) =>
      `INSERT INTO domain_page (name, id, states, intervals, interval_lo, interval_hi)
       SELECT CAST(column1 AS TEXT), column2, ifnull((SELECT states FROM temp.page_state WHERE pos = column3), '[]'),
         CAST(column4 AS TEXT), column5, column6
       FROM (VALUES ${rows})`,
  );
  // The bytes of the rows of one statement: views of it are bound, so it is only reused once
  // they are written (a new one when it is full).
  let out = Buffer.allocUnsafeSlow(1 << 20);
  let at = 0;
  const nameBuffer = names.bytes.buffer;
  const nameBase = names.bytes.byteOffset;
  const times = new TimeDigits();
  const chunk = new Chunk(iv, values.offsets, names.offsets);
  const { ids } = order;
  for (let p0 = 0; p0 < ids.length; p0 += Chunk.DOMAINS) {
    const p1 = Math.min(p0 + Chunk.DOMAINS, ids.length);
    chunk.gather(ids, p0, p1, start, firstId);
    let j = 0; // the chunk's next interval
    for (let p = p0; p < p1; p++) {
      const c = p - p0;
      const n = chunk.count[c]!;
      if (insert.at === 0) at = 0;
      if (at + 2 + n * intervalBytes > out.length) {
        out = Buffer.allocUnsafeSlow(Math.max(1 << 20, 2 * (2 + n * intervalBytes)));
        at = 0;
      }
      const from = at;
      out[at++] = 91; // [
      for (const end = j + n; j < end; j++) {
        if (at > from + 1) out[at++] = 44; // ,
        const prefix = chunk.aaaa[j] ? AAAA_PREFIX : A_PREFIX;
        for (let b = 0; b < prefix.length; b++) out[at++] = prefix[b]!;
        if (safe) {
          for (let b = chunk.valueStart[j]!, e = chunk.valueEnd[j]!; b < e; b++) out[at++] = values.bytes[b]!;
        } else at += out.write(JSON.stringify(values.get(chunk.value[j]!)).slice(1, -1), at, 'utf8');
        out[at++] = 34; // "
        out[at++] = 44;
        at = times.write(out, at, chunk.first[j]!);
        out[at++] = 44;
        at = times.write(out, at, chunk.last[j]!);
        out[at++] = 44;
        at = times.write(out, at, chunk.ended[j]!);
        out[at++] = 93; // ]
      }
      out[at++] = 93;
      const d = ids[p]!;
      const lo = start[d]!;
      const hi = start[d + 1]!;
      // Views made by the constructor: Buffer's subarray() took microseconds each.
      const nameStart = chunk.nameStart[c]!;
      const name = new Uint8Array(nameBuffer, nameBase + nameStart, chunk.nameEnd[c]! - nameStart);
      const intervals = new Uint8Array(out.buffer, out.byteOffset + from, at - from);
      // dns_interval ids are the positions + 1.
      insert.row(name, d, p, intervals, lo < hi ? lo + 1 : null, lo < hi ? hi : null);
    }
  }
  insert.flush();
  // temp.page_state goes with the connection (dropping it would read every page of it).
}

/**
 * The columns of the intervals (page) and names of Chunk.DOMAINS domains in name order, gathered
 * into small arrays by simple loops first: read in name order the intervals are all over the
 * arrays, and a loop that only copies keeps many reads in flight where the JSON loop waited for
 * each (the JSON of 2 million rows took 7 s, 3 s of it in cache misses).
 */
class Chunk {
  static readonly DOMAINS = 4096;
  readonly count = new Int32Array(Chunk.DOMAINS);
  readonly nameStart = new Uint32Array(Chunk.DOMAINS);
  readonly nameEnd = new Uint32Array(Chunk.DOMAINS);
  private index = new Int32Array(Chunk.DOMAINS * 4);
  aaaa = new Uint8Array(0);
  value = new Int32Array(0);
  valueStart = new Uint32Array(0);
  valueEnd = new Uint32Array(0);
  first = new Float64Array(0);
  last = new Float64Array(0);
  ended = new Float64Array(0);

  constructor(
    private readonly iv: IntervalArrays,
    private readonly valueOffsets: Uint32Array,
    private readonly nameOffsets: Uint32Array,
  ) {
    this.grow(Chunk.DOMAINS * 4);
  }

  private grow(size: number): void {
    const index = new Int32Array(size);
    index.set(this.index.subarray(0, Math.min(this.index.length, size)));
    this.index = index;
    this.aaaa = new Uint8Array(size);
    this.value = new Int32Array(size);
    this.valueStart = new Uint32Array(size);
    this.valueEnd = new Uint32Array(size);
    this.first = new Float64Array(size);
    this.last = new Float64Array(size);
    this.ended = new Float64Array(size);
  }

  /** The domains ids[p0..p1): their page's intervals, in order, and their names' bytes. */
  gather(ids: Int32Array, p0: number, p1: number, start: Int32Array, firstId: number): void {
    const { iv, valueOffsets, nameOffsets } = this;
    let k = 0;
    for (let p = p0; p < p1; p++) {
      const d = ids[p]!;
      const lo = start[d]!;
      const n = Math.min(start[d + 1]! - lo, DOMAIN_PAGE_INTERVALS);
      this.count[p - p0] = n;
      if (k + n > this.index.length) this.grow(2 * (k + n));
      for (let i = lo; i < lo + n; i++) this.index[k++] = i;
      this.nameStart[p - p0] = nameOffsets[d - firstId]!;
      this.nameEnd[p - p0] = nameOffsets[d - firstId + 1]! - 1;
    }
    const { index } = this;
    for (let j = 0; j < k; j++) this.value[j] = iv.value[index[j]!]!;
    for (let j = 0; j < k; j++) this.aaaa[j] = iv.aaaa[index[j]!]!;
    for (let j = 0; j < k; j++) this.first[j] = iv.first[index[j]!]!;
    for (let j = 0; j < k; j++) this.last[j] = iv.last[index[j]!]!;
    for (let j = 0; j < k; j++) this.ended[j] = iv.ended[index[j]!]!;
    for (let j = 0; j < k; j++) this.valueStart[j] = valueOffsets[this.value[j]!]!;
    for (let j = 0; j < k; j++) this.valueEnd[j] = valueOffsets[this.value[j]! + 1]! - 1;
  }
}

const A_PREFIX = Buffer.from('["A","', 'latin1');
const AAAA_PREFIX = Buffer.from('["AAAA","', 'latin1');

/**
 * Epoch times (NaN: null) written as JSON: a few distinct times (one per collection round) make
 * most of them, so the digits of recent ones are kept (a direct-mapped cache).
 */
class TimeDigits {
  private readonly keys = new Float64Array(1024).fill(-1);
  private readonly digits = new Uint8Array(1024 * 16);
  private readonly lengths = new Uint8Array(1024);

  /** Writes t at `at`; returns the position after it. */
  write(out: Buffer, at: number, t: number): number {
    if (t !== t) {
      out[at] = 110; // null
      out[at + 1] = 117;
      out[at + 2] = 108;
      out[at + 3] = 108;
      return at + 4;
    }
    if (!Number.isSafeInteger(t) || t < 0 || t >= 1e16) return out.write(String(t), at, 'latin1') + at;
    const slot = t & 1023;
    if (this.keys[slot] !== t) {
      let n = 1;
      for (let p = 10; p <= t; p *= 10) n++;
      for (let k = slot * 16 + n - 1, x = t; k >= slot * 16; k--, x = Math.floor(x / 10))
        this.digits[k] = 48 + (x % 10);
      this.lengths[slot] = n;
      this.keys[slot] = t;
    }
    const n = this.lengths[slot]!;
    for (let k = slot * 16, end = k + n; k < end; k++) out[at++] = this.digits[k]!;
    return at;
  }
}
