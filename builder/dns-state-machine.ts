/**
 * The answer-interval state machine of SPEC.md ("States and transitions"), held in memory.
 *
 * Per (name, record type) the state keeps the latest query outcome and the latest good answer:
 * its sorted canonical addresses (`vals`, a JSON array) and, at the same positions, the time each
 * address was first observed in the current run of answers (`firsts`). Every address of the
 * current answer is an open interval (first_observed = its entry of firsts, last_confirmed =
 * last_positive); an address that leaves the answer set ends its interval (a dns_ended row with
 * ended_at = the query that saw the change), one that joins opens one at the query's time,
 * addresses in both keep theirs. The same set in another order or with another TTL only advances
 * last_confirmed. A transient failure (timeout, servfail, malformed) never ends an interval.
 *
 * The whole DNS state is loaded from SQLite once, observations are applied in JavaScript, and
 * `save()` writes everything in ONE transaction: the new names, the new dns_ended rows and the
 * dns_state rows that changed. Nothing reaches the database before that commit, so a process that
 * dies mid-import leaves the state as it was, and the rerun redoes the work; a line no newer than
 * the state's last query for its name and type is skipped, so importing a file twice changes
 * nothing. `saveInParallel()` is the same save with the dns_state rows bound in worker threads.
 *
 * Memory: per key (name index × 2 + record type) typed arrays for the codes and the times, and
 * the three JSON texts as UTF-8 bytes in arenas (TextColumn); names live as UTF-8 bytes in an
 * arena with an open-addressing hash table, so lines are looked up without creating strings. No
 * JavaScript object per name or key, so major garbage collections stay cheap, and the arrays sit
 * in SharedArrayBuffers that save workers read in place.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { StateDb } from './state.js';
import type { ObservationRecord } from './sources/types.js';
import { OUTCOMES, outcomeClass } from '../shared/vocabulary.js';

export interface ApplyCounts {
  /** Names and types seen for the first time. */
  created: number;
  /** Same answer as before (last_confirmed advanced). */
  confirmed: number;
  /** Answer changed (intervals ended and/or opened). */
  changed: number;
  /** Transient failures recorded (state marked stale, answer kept). */
  transient: number;
  /** Lines no newer than the state: already applied, not applied again. */
  skipped: number;
}

export function emptyCounts(): ApplyCounts {
  return { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 0 };
}

/** Outcome codes: position in OUTCOMES + 1. 0 = no state yet (outcome) or never a good answer. */
export const OUTCOME_CODES: ReadonlyMap<string, number> = new Map(OUTCOMES.map((o, i) => [o, i + 1]));
export const POSITIVE = OUTCOME_CODES.get('positive')!;
const TRANSIENT = Uint8Array.from([0, ...OUTCOMES.map((o) => (outcomeClass(o) === 'transient' ? 1 : 0))]);
const OUTCOME_SQL = (expr: string): string =>
  `CASE ${expr} ${OUTCOMES.map((o, i) => `WHEN ${i + 1} THEN '${o}'`).join(' ')} END`;
const OUTCOME_CODE_SQL = (column: string): string =>
  `CASE ${column} ${OUTCOMES.map((o, i) => `WHEN '${o}' THEN ${i + 1}`).join(' ')} WHEN '' THEN 0 ELSE -1 END`;

/** The empty JSON array, shared by every key without addresses or CNAMEs. */
export const EMPTY_JSON = '[]';

/**
 * One observation as byte ranges of a buffer: what the line scanner fills in (without creating
 * strings), or what `applyRecord` writes for an already parsed record.
 */
export class ObservationFields {
  buf: Buffer = Buffer.alloc(0);
  nameStart = 0;
  nameEnd = 0;
  /** hashBytes() of the name bytes. */
  nameHash = 0;
  /** 0 = A, 1 = AAAA. */
  aaaa = 0;
  time = 0;
  /** OUTCOME_CODES of the outcome. */
  outcome = 0;
  /** Canonical JSON text of the sorted addresses (`["192.0.2.1"]`) in valsBuf; ignored when nVals is 0. */
  valsBuf: Buffer = this.buf;
  valsStart = 0;
  valsEnd = 0;
  nVals = 0;
  /** JSON text of the CNAME chain; a range of 2 bytes or less means the empty array. */
  cnamesStart = 0;
  cnamesEnd = 0;
}

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** FNV-1a of bytes [start, end); the line scanner computes the same value while it reads a name. */
export function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return h;
}

/**
 * The bytes as a string, one byte per character (Buffer#latin1Slice: no UTF-8 decoding and no
 * encoding lookup as in toString(); twice as fast). For bytes known to be ASCII only.
 */
function asciiText(b: Buffer, start: number, end: number): string {
  return (b as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(start, end);
}

/** Bytes of a name that order new names before they get their ids (a multiple of 4). */
const SORT_PREFIX = 12;

/** Names as UTF-8 bytes in one arena, found by an open-addressing hash table (linear probing). */
class NameTable {
  count = 0;
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  private offsets = new Uint32Array(1024);
  private lengths = new Uint32Array(1024);
  private hashes = new Int32Array(1024);
  /** index + 1 of the name in each slot; 0 = empty. */
  private slots = new Int32Array(2048);
  private mask = 2047;
  /** No byte above 127 in any name: names are read back without UTF-8 decoding. */
  private ascii = true;

  /** Index of the name in bytes [start, end) with hash h, or -1. */
  find(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    const arena = this.arena;
    for (let p = h & this.mask; ; p = (p + 1) & this.mask) {
      const slot = this.slots[p]!;
      if (slot === 0) return -1;
      const index = slot - 1;
      if (this.hashes[index] !== h || this.lengths[index] !== length) continue;
      const offset = this.offsets[index]!;
      let i = 0;
      while (i < length && arena[offset + i] === b[start + i]) i++;
      if (i === length) return index;
    }
  }

  /** Adds a name known to be absent; returns its index. */
  add(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    if (this.used + length > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + length));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    const offset = this.used;
    let all = 0;
    for (let i = 0; i < length; i++) all |= arena[offset + i] = b[start + i]!;
    if (all > 127) this.ascii = false;
    this.used += length;
    return this.register(offset, length, h);
  }

  /**
   * Indexes from..count-1 ordered by the first SORT_PREFIX bytes of their names (byte order, as
   * SQLite's BINARY collation; names sharing that prefix keep their order). Inserting names in
   * this order only appends to dns_name's UNIQUE index, or nearly: three times cheaper than
   * inserting them in the order they were seen. LSD radix sort on 16-bit digits of prefix words
   * read once in arena order: cache-friendly, unlike comparisons of names spread over the arena.
   */
  sortedByPrefix(from: number): Int32Array {
    const n = this.count - from;
    const words = SORT_PREFIX / 4;
    let keys = new Uint32Array(n * words);
    const arena = this.arena;
    for (let i = 0; i < n; i++) {
      const offset = this.offsets[from + i]!;
      const length = this.lengths[from + i]!;
      for (let w = 0; w < words; w++) {
        let word = 0;
        for (let j = w * 4; j < w * 4 + 4; j++) word = word * 256 + (j < length ? arena[offset + j]! : 0);
        keys[i * words + w] = word;
      }
    }
    let order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = from + i;
    let nextKeys = new Uint32Array(n * words);
    let nextOrder = new Int32Array(n);
    const counts = new Int32Array(65537);
    for (let pass = words * 2 - 1; pass >= 0; pass--) {
      const w = pass >> 1;
      const shift = pass & 1 ? 0 : 16;
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[((keys[i * words + w]! >>> shift) & 0xffff) + 1]!++;
      if (counts[((keys[w]! >>> shift) & 0xffff) + 1] === n) continue; // one digit: nothing moves
      for (let d = 1; d <= 65536; d++) counts[d]! += counts[d - 1]!;
      for (let i = 0; i < n; i++) {
        const at = counts[(keys[i * words + w]! >>> shift) & 0xffff]!++;
        nextOrder[at] = order[i]!;
        for (let x = 0; x < words; x++) nextKeys[at * words + x] = keys[i * words + x]!;
      }
      [keys, nextKeys] = [nextKeys, keys];
      [order, nextOrder] = [nextOrder, order];
    }
    return order;
  }

  /** Adds names (absent, none empty) given as one text, newline-separated; returns how many. */
  addMany(text: string): number {
    const room = text.length * 3;
    if (this.used + room > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + room));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    const start = this.used;
    const end = start + arena.write(text, start, 'utf8');
    if (end - start !== text.length) this.ascii = false;
    let added = 0;
    let h = FNV_OFFSET;
    let nameStart = start;
    for (let i = start; i <= end; i++) {
      if (i === end || arena[i] === 10) {
        this.register(nameStart, i - nameStart, h);
        added++;
        h = FNV_OFFSET;
        nameStart = i + 1;
      } else h = Math.imul(h ^ arena[i]!, FNV_PRIME);
    }
    this.used = end;
    return added;
  }

  name(index: number): string {
    const offset = this.offsets[index]!;
    const end = offset + this.lengths[index]!;
    return this.ascii ? asciiText(this.arena, offset, end) : this.arena.toString('utf8', offset, end);
  }

  private register(offset: number, length: number, h: number): number {
    const index = this.count++;
    if (index >= this.offsets.length) {
      const size = this.offsets.length * 2;
      this.offsets = grow(this.offsets, new Uint32Array(size));
      this.lengths = grow(this.lengths, new Uint32Array(size));
      this.hashes = grow(this.hashes, new Int32Array(size));
    }
    this.offsets[index] = offset;
    this.lengths[index] = length;
    this.hashes[index] = h;
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(index);
    return index;
  }

  private place(index: number): void {
    let p = this.hashes[index]! & this.mask;
    while (this.slots[p] !== 0) p = (p + 1) & this.mask;
    this.slots[p] = index + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < this.count; i++) this.place(i);
  }
}

function grow<T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/*
 * The per-key arrays and the text arenas live in SharedArrayBuffers: the worker threads of a big
 * save read them where they are, without a copy.
 */
const sharedU8 = (n: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(n));
const sharedU32 = (n: number): Uint32Array => new Uint32Array(new SharedArrayBuffer(n * 4));
const sharedF64 = (n: number): Float64Array => new Float64Array(new SharedArrayBuffer(n * 8));
const sharedBytes = (n: number): Buffer => Buffer.from(new SharedArrayBuffer(n));

export interface SaveResult {
  /** Names written to dns_name. */
  names: number;
  /** Rows appended to dns_ended. */
  ended: number;
  /** dns_state rows written. */
  states: number;
  /** 'replace': INSERT OR REPLACE of the changed keys; 'rewrite': DELETE and insert all keys. */
  mode: 'replace' | 'rewrite' | 'none';
  /** Worker threads that wrote dns_state rows (0: this thread did). */
  partitions: number;
  seconds: number;
  /** Seconds per step: sorting new names, writing names, ended rows, states, and the commit. */
  steps: { sort: number; names: number; ended: number; states: number; commit: number };
}

/**
 * Share of changed keys from which save() rewrites dns_state whole (DELETE, then insert every key
 * in key order) instead of INSERT OR REPLACE per changed key (also in key order). Measured with
 * all 4,000,000 keys changed (a second round imported into a saved first one), both take the
 * same time within the noise of the machine (10.1 s and 10.1 s, 13.1 s and 10.9 s): a replace
 * of a WITHOUT ROWID row found by its key costs about what an append does. The rewrite is kept
 * for states where most keys changed (every confirmation changes its key) because it leaves a
 * freshly packed table and, in saveInParallel(), lets SQLite copy the workers' rows into the
 * emptied table as whole records (1.6 s for 4 million rows; 3.3 s with OR REPLACE over them);
 * replace otherwise, which only touches the changed keys.
 */
const REWRITE_SHARE = 0.75;

/** Rows to write from which saveInParallel() uses worker threads (fewer: not worth starting them). */
const PARALLEL_SAVE_ROWS = 200_000;

/** SQLite page cache while saving (KiB, as PRAGMA cache_size takes it when negative). */
const SAVE_CACHE_SIZE = -32768;

/** Rows per multi-row INSERT: fewer statement calls (about 1 µs each) without huge statements. */
const ROWS_PER_STATEMENT = 64;

/** Batches rows into multi-row INSERT statements: `values` of ROWS_PER_STATEMENT rows, then run. */
class RowWriter {
  readonly values: unknown[];
  private n = 0;
  private readonly many;
  private readonly one;
  written = 0;

  constructor(
    db: StateDb,
    private readonly columns: number,
    sql: (rows: string) => string,
  ) {
    const row = `(${new Array<string>(columns).fill('?').join(',')})`;
    this.many = db.prepare(sql(new Array<string>(ROWS_PER_STATEMENT).fill(row).join(',')));
    this.one = db.prepare(sql(row));
    this.values = new Array<unknown>(columns * ROWS_PER_STATEMENT);
  }

  /** Index in `values` where the next row's columns go. */
  get at(): number {
    return this.n * this.columns;
  }

  /** Call after filling one row at `at`. */
  endRow(): void {
    this.written++;
    if (++this.n === ROWS_PER_STATEMENT) {
      // Spread: better-sqlite3 binds arguments about twice as fast as the elements of an array.
      this.many.run(...this.values);
      this.n = 0;
    }
  }

  flush(): void {
    for (let r = 0; r < this.n; r++) {
      this.one.run(this.values.slice(r * this.columns, (r + 1) * this.columns));
    }
    this.n = 0;
  }
}

const STATE_COLUMNS = `name_id, rtype, outcome, good_outcome, vals, firsts, cnames, last_observed, last_confirmed, last_positive`;

/*
 * A dns_state row is bound as few values as possible (each bound value costs about 0.1 µs,
 * a string more): column1 packs name_id × 512 + AAAA × 256 + (last_confirmed = last_observed) × 128
 * + (last_positive = last_observed) × 64 + outcome × 8 + good outcome; column2 is last_observed.
 * The other values are bound only when a row needs them (its shape): last_confirmed and
 * last_positive when they are neither null nor last_observed, vals and firsts when not empty,
 * cnames when not empty. Rows of one shape go through one multi-row INSERT.
 */
/**
 * Times are bound as t - TIME_BASE (added back in SQL): small integers, which V8 keeps unboxed,
 * where epoch seconds would allocate a heap number per value. Any time stays exact.
 */
const TIME_BASE = 1_800_000_000;
const SHAPE_CONFIRMED = 1;
const SHAPE_POSITIVE = 2;
const SHAPE_VALS = 4;
const SHAPE_CNAMES = 8;

function stateSql(shape: number, replace: boolean, rows: string): string {
  let column = 3;
  const next = (): string => `column${column++}`;
  const time = (flag: number, bit: number): string =>
    shape & flag ? `${next()} + ${TIME_BASE}` : `CASE WHEN column1 & ${bit} THEN column2 + ${TIME_BASE} END`;
  const confirmed = time(SHAPE_CONFIRMED, 128);
  const positive = time(SHAPE_POSITIVE, 64);
  const vals = shape & SHAPE_VALS ? next() : `'${EMPTY_JSON}'`;
  const firsts = shape & SHAPE_VALS ? next() : `'${EMPTY_JSON}'`;
  const cnames = shape & SHAPE_CNAMES ? next() : `'${EMPTY_JSON}'`;
  return `INSERT ${replace ? 'OR REPLACE ' : ''}INTO dns_state (${STATE_COLUMNS})
    SELECT column1 >> 9, CASE WHEN column1 & 256 THEN 'AAAA' ELSE 'A' END,
      ${OUTCOME_SQL('((column1 >> 3) & 7)')}, ${OUTCOME_SQL('(column1 & 7)')},
      ${vals}, ${firsts}, ${cnames}, column2 + ${TIME_BASE}, ${confirmed}, ${positive}
    FROM (VALUES ${rows})`;
}

function shapeColumns(shape: number): number {
  return (
    2 +
    (shape & SHAPE_CONFIRMED ? 1 : 0) +
    (shape & SHAPE_POSITIVE ? 1 : 0) +
    (shape & SHAPE_VALS ? 2 : 0) +
    (shape & SHAPE_CNAMES ? 1 : 0)
  );
}

/** A TextColumn's storage: the text of key k is bytes [offsets[k], offsets[k] + lengths[k]). */
export interface TextView {
  bytes: Buffer;
  offsets: Uint32Array;
  lengths: Uint32Array;
  /** No byte above 127. */
  ascii: boolean;
}

function textAt(t: TextView, k: number): string {
  const length = t.lengths[k]!;
  if (length === 0) return EMPTY_JSON;
  const offset = t.offsets[k]!;
  return t.ascii
    ? asciiText(t.bytes, offset, offset + length)
    : t.bytes.toString('utf8', offset, offset + length);
}

/** What writeStateRows reads: the per-key arrays and texts of a DnsStateMachine. */
export interface StateView {
  nameIds: Float64Array;
  outcome: Uint8Array;
  good: Uint8Array;
  dirty: Uint8Array;
  lastObserved: Float64Array;
  lastConfirmed: Float64Array;
  lastPositive: Float64Array;
  vals: TextView;
  firsts: TextView;
  cnames: TextView;
}

/**
 * Inserts the dns_state rows of the names `order` lists (name indexes, in id order): every key
 * with a state (all) or the changed ones; with OR REPLACE when `replace`. Runs in the importing
 * thread or in a save worker (dns-save-worker.ts), on a view of shared memory. Returns how many.
 */
export function writeStateRows(
  db: StateDb,
  view: StateView,
  order: Int32Array,
  all: boolean,
  replace: boolean,
): number {
  const { nameIds, outcome, good, dirty, lastObserved, lastConfirmed, lastPositive } = view;
  // Views that crossed a thread boundary arrive as plain Uint8Arrays: Buffers again.
  const asBuffer = (t: TextView): TextView => {
    const bytes: Uint8Array = t.bytes;
    return {
      ...t,
      bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
    };
  };
  const vals = asBuffer(view.vals);
  const firsts = asBuffer(view.firsts);
  const cnames = asBuffer(view.cnames);
  const writers: RowWriter[] = [];
  for (let r = 0; r < order.length; r++) {
    const index = order[r]!;
    const nameId = nameIds[index]!;
    for (let k = index * 2; k < index * 2 + 2; k++) {
      const oc = outcome[k]!;
      if (oc === 0 || (!all && dirty[k] === 0)) continue;
      const observed = lastObserved[k]!;
      const confirmed = lastConfirmed[k]!;
      const positive = lastPositive[k]!;
      const confirmedSame = confirmed === observed;
      const positiveSame = positive === observed;
      const shape =
        (confirmedSame || confirmed !== confirmed ? 0 : SHAPE_CONFIRMED) |
        (positiveSame || positive !== positive ? 0 : SHAPE_POSITIVE) |
        (vals.lengths[k] === 0 ? 0 : SHAPE_VALS) |
        (cnames.lengths[k] === 0 ? 0 : SHAPE_CNAMES);
      const w = (writers[shape] ??= new RowWriter(db, shapeColumns(shape), (rows) =>
        stateSql(shape, replace, rows),
      ));
      const v = w.values;
      let at = w.at;
      v[at++] =
        nameId * 512 +
        (k & 1) * 256 +
        (confirmedSame ? 128 : 0) +
        (positiveSame ? 64 : 0) +
        oc * 8 +
        good[k]!;
      v[at++] = observed - TIME_BASE;
      if (shape & SHAPE_CONFIRMED) v[at++] = confirmed - TIME_BASE;
      if (shape & SHAPE_POSITIVE) v[at++] = positive - TIME_BASE;
      if (shape & SHAPE_VALS) {
        v[at++] = textAt(vals, k);
        v[at++] = textAt(firsts, k);
      }
      if (shape & SHAPE_CNAMES) v[at++] = textAt(cnames, k);
      w.endRow();
    }
  }
  let written = 0;
  for (const w of writers) {
    if (!w) continue;
    w.flush();
    written += w.written;
  }
  return written;
}

/**
 * One JSON text per key (vals, firsts or cnames) as UTF-8 bytes in an arena: millions of small
 * strings would cost 16 bytes of header each and garbage-collector time (every major GC marks
 * them all). Length 0 stands for the empty array. A replaced text leaves its bytes behind until
 * the arena is compacted, which happens when more than half of it is such garbage.
 */
class TextColumn {
  private bytes = sharedBytes(1 << 16);
  private used = 0;
  private garbage = 0;
  private offsets = sharedU32(2048);
  private lengths = sharedU32(2048);
  /** No byte above 127 was ever stored: texts are read back without UTF-8 decoding. */
  private ascii = true;

  /** Room for keys [0, keys). */
  ensure(keys: number): void {
    if (keys <= this.offsets.length) return;
    const size = Math.max(keys, this.offsets.length * 2);
    this.offsets = grow(this.offsets, sharedU32(size));
    this.lengths = grow(this.lengths, sharedU32(size));
  }

  /** The column as it is now (what save workers read). */
  view(): TextView {
    return { bytes: this.bytes, offsets: this.offsets, lengths: this.lengths, ascii: this.ascii };
  }

  isEmpty(k: number): boolean {
    return this.lengths[k] === 0;
  }

  /** Whether key k holds the text in bytes [start, end) of b (2 bytes or less: the empty array). */
  equals(k: number, b: Uint8Array, start: number, end: number): boolean {
    const n = end - start;
    const length = this.lengths[k]!;
    if (n <= EMPTY_JSON.length) return length === 0;
    if (length !== n) return false;
    const offset = this.offsets[k]!;
    const bytes = this.bytes;
    for (let i = 0; i < n; i++) if (bytes[offset + i] !== b[start + i]) return false;
    return true;
  }

  /** Sets key k to the text in bytes [start, end) of b (2 bytes or less: the empty array). */
  set(k: number, b: Uint8Array, start: number, end: number): void {
    this.garbage += this.lengths[k]!;
    const n = end - start;
    if (n <= EMPTY_JSON.length) {
      this.lengths[k] = 0;
      return;
    }
    const offset = this.reserve(n);
    const bytes = this.bytes;
    let all = 0;
    for (let i = 0; i < n; i++) all |= bytes[offset + i] = b[start + i]!;
    if (all > 127) this.ascii = false;
    this.used = offset + n;
    this.offsets[k] = offset;
    this.lengths[k] = n;
  }

  setText(k: number, text: string): void {
    this.garbage += this.lengths[k]!;
    if (text === EMPTY_JSON) {
      this.lengths[k] = 0;
      return;
    }
    const offset = this.reserve(text.length * 3);
    const n = this.bytes.write(text, offset, 'utf8');
    if (n !== text.length) this.ascii = false;
    this.used = offset + n;
    this.offsets[k] = offset;
    this.lengths[k] = n;
  }

  text(k: number): string {
    return textAt(this.view(), k);
  }

  /**
   * Sets keys[0..count) to the newline-separated texts of `text` (an empty one: the empty array,
   * as the load query writes it); throws unless there are exactly count of them.
   */
  load(text: string, keys: Int32Array, count: number): void {
    const start = this.reserve(text.length * 3);
    const bytes = this.bytes;
    const end = start + bytes.write(text, start, 'utf8');
    if (end - start !== text.length) this.ascii = false;
    this.used = end;
    let i = 0;
    let from = start;
    for (let p = start; p <= end; p++) {
      if (p < end && bytes[p] !== 10) continue;
      if (i === count) break;
      const k = keys[i++]!;
      this.garbage += this.lengths[k]!;
      this.offsets[k] = from;
      this.lengths[k] = p - from;
      from = p + 1;
    }
    if (i !== count || from !== end + 1) throw new Error('dns_state: a JSON text spans lines');
  }

  /** Where n more bytes go (this.used is moved past them by the caller). */
  private reserve(n: number): number {
    if (this.used + n > this.bytes.length) {
      if (this.garbage * 2 > this.used) this.compact(n);
      if (this.used + n > this.bytes.length) {
        const bytes = sharedBytes(Math.max(Math.ceil(this.bytes.length * 1.5), this.used + n));
        this.bytes.copy(bytes, 0, 0, this.used);
        this.bytes = bytes;
      }
    }
    return this.used;
  }

  /** Copies the live texts to a new arena with room for n more bytes. */
  private compact(n: number): void {
    const live = this.used - this.garbage;
    const bytes = sharedBytes(Math.max(1 << 16, Math.ceil((live + n) * 1.25)));
    let used = 0;
    for (let k = 0; k < this.lengths.length; k++) {
      const length = this.lengths[k]!;
      if (length === 0) continue;
      this.bytes.copy(bytes, used, this.offsets[k]!, this.offsets[k]! + length);
      this.offsets[k] = used;
      used += length;
    }
    this.bytes = bytes;
    this.used = used;
    this.garbage = 0;
  }
}

/** Rows per query when the state is loaded (texts of that many rows in one string). */
const LOAD_ROWS = 16384;

export class DnsStateMachine {
  private readonly names = new NameTable();
  /**
   * dns_name.id per name index. New names get theirs when saved: above every stored id, ordered
   * by name, so both B-trees of dns_name (rowid and the UNIQUE index) are (nearly) only appended
   * to.
   */
  private nameIds = sharedF64(1024);
  /** Name indexes by ascending id: [0, storedNames) are in dns_name. */
  private byId = new Int32Array(1024);
  private storedNames = 0;
  private nextNameId = 1;

  // Per key = name index × 2 + (AAAA ? 1 : 0). Outcome 0: no state yet. Times: epoch seconds, NaN = null.
  private outcome = sharedU8(2048);
  private good = sharedU8(2048);
  private dirty = sharedU8(2048);
  private lastObserved = sharedF64(2048);
  private lastConfirmed = sharedF64(2048);
  private lastPositive = sharedF64(2048);
  private readonly vals = new TextColumn();
  private readonly firsts = new TextColumn();
  private readonly cnames = new TextColumn();
  private dirtyCount = 0;

  // dns_ended rows not yet saved.
  private endedKeys: number[] = [];
  private endedValues: string[] = [];
  private endedFirst: number[] = [];
  private endedLast: number[] = [];
  private endedAt: number[] = [];

  // The firsts text of a new answer first seen at firstsTime, per number of addresses.
  private firstsTime = NaN;
  private readonly firstsCache: Buffer[] = [];

  private scratch = Buffer.allocUnsafe(4096);
  private readonly recordFields = new ObservationFields();

  constructor(private readonly db: StateDb) {
    // The load reads each table once, in order: a small page cache does, and spares memory.
    this.withSaveCache(() => this.load());
  }

  /**
   * Loads dns_name and dns_state. Rows are fetched LOAD_ROWS at a time with their values joined
   * into a few strings by SQLite (group_concat): fetching millions of rows one by one costs a few
   * microseconds each through better-sqlite3. The strings of one query list the rows in the same
   * order, whatever it is.
   */
  private load(): void {
    const names = this.db.prepare(
      `SELECT count(*), group_concat(id, ','), group_concat(name, char(10))
       FROM (SELECT id, name FROM dns_name WHERE id > ? ORDER BY id LIMIT ${LOAD_ROWS})`,
    );
    let after = -Infinity;
    for (;;) {
      const [count, ids, text] = names.raw().get(after) as [number, string | null, string | null];
      if (count === 0) break;
      const first = this.names.count;
      if (this.names.addMany(text!) !== count) throw new Error('dns_name: a name spans lines');
      const parsed = JSON.parse(`[${ids!}]`) as number[];
      for (let i = 0; i < count; i++) {
        this.newKeys(first + i);
        this.nameIds[first + i] = parsed[i]!;
        after = Math.max(after, parsed[i]!);
      }
    }
    this.storedNames = this.names.count;
    this.nextNameId = Number.isFinite(after) ? after + 1 : 1;
    // Name indexes by id, to find the name of a dns_state row.
    const byId = this.byId.subarray(0, this.storedNames);
    let sorted = true;
    for (let i = 0; i < byId.length; i++) {
      byId[i] = i;
      if (i > 0 && this.nameIds[i]! < this.nameIds[i - 1]!) sorted = false;
    }
    if (!sorted) byId.sort((a, b) => this.nameIds[a]! - this.nameIds[b]!);

    const text = (column: string): string =>
      `group_concat(CASE ${column} WHEN '${EMPTY_JSON}' THEN '' ELSE ${column} END, char(10))`;
    const states = this.db.prepare(
      `SELECT count(*),
         group_concat(name_id || ',' || CASE rtype WHEN 'A' THEN 0 WHEN 'AAAA' THEN 1 ELSE -1 END
           || ',' || ${OUTCOME_CODE_SQL('outcome')} || ',' || ${OUTCOME_CODE_SQL(`coalesce(good_outcome, '')`)}
           || ',' || last_observed || ',' || ifnull(last_confirmed, 'null') || ',' || ifnull(last_positive, 'null'), ','),
         ${text('vals')}, ${text('firsts')}, ${text('cnames')}
       FROM (SELECT * FROM dns_state WHERE (name_id, rtype) > (?, ?) ORDER BY name_id, rtype LIMIT ${LOAD_ROWS})`,
    );
    const keys = new Int32Array(LOAD_ROWS);
    let afterId = -Infinity;
    let afterType = 0;
    for (;;) {
      const row = states.raw().get(afterId, afterType === 1 ? 'AAAA' : 'A') as [
        number,
        string,
        string,
        string,
        string,
      ];
      const count = row[0];
      if (count === 0) break;
      const numbers = JSON.parse(`[${row[1]}]`) as Array<number | null>;
      for (let i = 0; i < count; i++) {
        const nameId = numbers[i * 7]!;
        const aaaa = numbers[i * 7 + 1]!;
        const oc = numbers[i * 7 + 2]!;
        const good = numbers[i * 7 + 3]!;
        const index = this.indexOfId(nameId);
        if (index < 0)
          throw new Error(`dns_state has a row for name id ${nameId}, which dns_name does not list`);
        if (aaaa < 0 || oc <= 0 || good < 0) {
          throw new Error(`dns_state row of name id ${nameId} has an unknown record type or outcome`);
        }
        if (nameId > afterId || (nameId === afterId && aaaa > afterType)) {
          afterId = nameId;
          afterType = aaaa;
        }
        const k = index * 2 + aaaa;
        keys[i] = k;
        this.outcome[k] = oc;
        this.good[k] = good;
        this.lastObserved[k] = numbers[i * 7 + 4]!;
        this.lastConfirmed[k] = numbers[i * 7 + 5] ?? NaN;
        this.lastPositive[k] = numbers[i * 7 + 6] ?? NaN;
      }
      this.vals.load(row[2], keys, count);
      this.firsts.load(row[3], keys, count);
      this.cnames.load(row[4], keys, count);
    }
  }

  /** Index of the stored name with this id, or -1 (binary search in byId). */
  private indexOfId(id: number): number {
    let lo = 0;
    let hi = this.storedNames - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const index = this.byId[mid]!;
      const x = this.nameIds[index]!;
      if (x === id) return index;
      if (x < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Room for the two keys of a new name index. */
  private newKeys(index: number): void {
    if (index >= this.nameIds.length) {
      this.nameIds = grow(this.nameIds, sharedF64(this.nameIds.length * 2));
      this.byId = grow(this.byId, new Int32Array(this.byId.length * 2));
    }
    const keys = (index + 1) * 2;
    if (keys > this.outcome.length) {
      const size = this.outcome.length * 2;
      this.outcome = grow(this.outcome, sharedU8(size));
      this.good = grow(this.good, sharedU8(size));
      this.dirty = grow(this.dirty, sharedU8(size));
      this.lastObserved = grow(this.lastObserved, sharedF64(size));
      this.lastConfirmed = grow(this.lastConfirmed, sharedF64(size));
      this.lastPositive = grow(this.lastPositive, sharedF64(size));
      this.vals.ensure(size);
      this.firsts.ensure(size);
      this.cnames.ensure(size);
    }
  }

  /** Applies one already parsed (canonical) observation. */
  applyRecord(r: ObservationRecord, counts: ApplyCounts): void {
    const f = this.recordFields;
    const vals = JSON.stringify(r.values);
    const cnames = JSON.stringify(r.cnames);
    const room = (r.name.length + vals.length + cnames.length) * 3;
    if (room > this.scratch.length) this.scratch = Buffer.allocUnsafe(room * 2);
    const b = this.scratch;
    f.buf = b;
    f.valsBuf = b;
    f.nameStart = 0;
    f.nameEnd = b.write(r.name, 0, 'utf8');
    f.nameHash = hashBytes(b, 0, f.nameEnd);
    f.valsStart = f.nameEnd;
    f.valsEnd = f.valsStart + b.write(vals, f.valsStart, 'utf8');
    f.nVals = r.values.length;
    f.cnamesStart = f.valsEnd;
    f.cnamesEnd = f.cnamesStart + b.write(cnames, f.cnamesStart, 'utf8');
    f.aaaa = r.type === 'AAAA' ? 1 : 0;
    f.time = r.time;
    f.outcome = OUTCOME_CODES.get(r.outcome)!;
    this.apply(f, counts);
  }

  /** Applies one observation. Observations of one name and type must come in time order. */
  apply(f: ObservationFields, counts: ApplyCounts): void {
    let index = this.names.find(f.buf, f.nameStart, f.nameEnd, f.nameHash);
    if (index < 0) {
      index = this.names.add(f.buf, f.nameStart, f.nameEnd, f.nameHash);
      this.newKeys(index);
    }
    const k = index * 2 + f.aaaa;
    const t = f.time;
    const oc = f.outcome;
    if (this.outcome[k] === 0) {
      // First sight of a name and type.
      const transient = TRANSIENT[oc] === 1;
      this.outcome[k] = oc;
      this.good[k] = transient ? 0 : oc;
      if (f.nVals > 0) {
        this.vals.set(k, f.valsBuf, f.valsStart, f.valsEnd);
        const firsts = this.firstsOf(t, f.nVals);
        this.firsts.set(k, firsts, 0, firsts.length);
      }
      this.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
      this.lastObserved[k] = t;
      this.lastConfirmed[k] = transient ? NaN : t;
      this.lastPositive[k] = oc === POSITIVE ? t : NaN;
      counts.created++;
    } else if (t <= this.lastObserved[k]!) {
      counts.skipped++;
      return;
    } else if (TRANSIENT[oc] === 1) {
      // The answer is kept; only the latest query moves.
      this.outcome[k] = oc;
      this.lastObserved[k] = t;
      counts.transient++;
    } else if (
      this.good[k] === oc &&
      (f.nVals === 0 ? this.vals.isEmpty(k) : this.vals.equals(k, f.valsBuf, f.valsStart, f.valsEnd))
    ) {
      // Same answer: last_confirmed advances, the CNAME chain is updated.
      this.outcome[k] = oc;
      this.lastObserved[k] = t;
      this.lastConfirmed[k] = t;
      if (oc === POSITIVE) this.lastPositive[k] = t;
      if (!this.cnames.equals(k, f.buf, f.cnamesStart, f.cnamesEnd)) {
        this.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
      }
      counts.confirmed++;
    } else {
      this.change(k, f);
      counts.changed++;
    }
    if (this.dirty[k] === 0) {
      this.dirty[k] = 1;
      this.dirtyCount++;
    }
  }

  /** A different answer: addresses that left end their interval, those that joined open one. */
  private change(k: number, f: ObservationFields): void {
    const t = f.time;
    if (!this.vals.isEmpty(k)) {
      const before = JSON.parse(this.vals.text(k)) as string[];
      const beforeFirsts = JSON.parse(this.firsts.text(k)) as number[];
      const after =
        f.nVals > 0 ? (JSON.parse(f.valsBuf.toString('utf8', f.valsStart, f.valsEnd)) as string[]) : [];
      const lastConfirmed = this.lastPositive[k]!;
      for (let i = 0; i < before.length; i++) {
        if (after.includes(before[i]!)) continue;
        this.endedKeys.push(k);
        this.endedValues.push(before[i]!);
        this.endedFirst.push(beforeFirsts[i]!);
        this.endedLast.push(lastConfirmed);
        this.endedAt.push(t);
      }
      this.firsts.setText(
        k,
        `[${after
          .map((v) => {
            const i = before.indexOf(v);
            return i < 0 ? t : beforeFirsts[i]!;
          })
          .join(',')}]`,
      );
    } else if (f.nVals > 0) {
      const firsts = this.firstsOf(t, f.nVals);
      this.firsts.set(k, firsts, 0, firsts.length);
    }
    if (f.nVals > 0) this.vals.set(k, f.valsBuf, f.valsStart, f.valsEnd);
    else this.vals.setText(k, EMPTY_JSON);
    this.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
    this.outcome[k] = f.outcome;
    this.good[k] = f.outcome;
    this.lastObserved[k] = t;
    this.lastConfirmed[k] = t;
    if (f.outcome === POSITIVE) this.lastPositive[k] = t;
  }

  /** `[t,t,…]` for n addresses first seen at t (kept for the lines of the same second). */
  private firstsOf(t: number, n: number): Buffer {
    if (t !== this.firstsTime) {
      this.firstsTime = t;
      this.firstsCache.length = 0;
    }
    let text = this.firstsCache[n];
    if (text === undefined) {
      text = Buffer.from(`[${new Array<number>(n).fill(t).join(',')}]`);
      this.firstsCache[n] = text;
    }
    return text;
  }

  /** The per-key arrays and texts as they are now. */
  private view(): StateView {
    return {
      nameIds: this.nameIds,
      outcome: this.outcome,
      good: this.good,
      dirty: this.dirty,
      lastObserved: this.lastObserved,
      lastConfirmed: this.lastConfirmed,
      lastPositive: this.lastPositive,
      vals: this.vals.view(),
      firsts: this.firsts.view(),
      cnames: this.cnames.view(),
    };
  }

  /**
   * What a save writes: ids for the new names (in name order, above every stored id), the
   * names in id order, and whether dns_state is rewritten whole or only changed keys replaced.
   */
  private prepareSave(): SavePlan {
    const started = performance.now();
    const fresh = this.names.sortedByPrefix(this.storedNames);
    for (let r = 0; r < fresh.length; r++) this.nameIds[fresh[r]!] = this.nextNameId + r;
    const order = new Int32Array(this.names.count);
    order.set(this.byId.subarray(0, this.storedNames));
    order.set(fresh, this.storedNames);
    let present = 0;
    for (let k = 0; k < this.names.count * 2; k++) if (this.outcome[k] !== 0) present++;
    const mode: SaveResult['mode'] =
      this.dirtyCount === 0 ? 'none' : this.dirtyCount >= present * REWRITE_SHARE ? 'rewrite' : 'replace';
    const steps = { sort: (performance.now() - started) / 1000, names: 0, ended: 0, states: 0, commit: 0 };
    return {
      started,
      fresh,
      order,
      result: { names: 0, ended: 0, states: 0, mode, partitions: 0, seconds: 0, steps },
      mark: performance.now(),
    };
  }

  private step(plan: SavePlan, name: keyof SaveResult['steps']): void {
    const now = performance.now();
    plan.result.steps[name] += (now - plan.mark) / 1000;
    plan.mark = now;
  }

  /** Inserts the new names (in id order) and the dns_ended rows not yet saved. */
  private writeNamesAndEnded(plan: SavePlan): void {
    const names = new RowWriter(this.db, 2, (rows) => `INSERT INTO dns_name (id, name) VALUES ${rows}`);
    const nv = names.values;
    for (const index of plan.fresh) {
      const at = names.at;
      nv[at] = this.nameIds[index];
      nv[at + 1] = this.names.name(index);
      names.endRow();
    }
    names.flush();
    plan.result.names = names.written;
    this.step(plan, 'names');
    const ended = new RowWriter(
      this.db,
      6,
      (rows) =>
        `INSERT INTO dns_ended (name_id, rtype, value, first_observed, last_confirmed, ended_at)
         SELECT column1, CASE column2 WHEN 1 THEN 'AAAA' ELSE 'A' END, column3, column4, column5, column6
         FROM (VALUES ${rows})`,
    );
    const ev = ended.values;
    for (let i = 0; i < this.endedKeys.length; i++) {
      const k = this.endedKeys[i]!;
      const at = ended.at;
      ev[at] = this.nameIds[k >> 1];
      ev[at + 1] = k & 1;
      ev[at + 2] = this.endedValues[i];
      ev[at + 3] = this.endedFirst[i];
      ev[at + 4] = this.endedLast[i];
      ev[at + 5] = this.endedAt[i];
      ended.endRow();
    }
    ended.flush();
    plan.result.ended = ended.written;
    this.step(plan, 'ended');
  }

  /** After the commit: the machine now matches the database. */
  private finishSave(plan: SavePlan): SaveResult {
    this.byId.set(plan.fresh, this.storedNames);
    this.nextNameId += plan.fresh.length;
    this.storedNames = this.names.count;
    this.endedKeys = [];
    this.endedValues = [];
    this.endedFirst = [];
    this.endedLast = [];
    this.endedAt = [];
    this.dirty.fill(0);
    this.dirtyCount = 0;
    plan.result.seconds = (performance.now() - plan.started) / 1000;
    return plan.result;
  }

  /** Runs fn with the small page cache of a save or a load (each goes through the tables in order). */
  private withSaveCache<T>(fn: () => T): T {
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma(`cache_size = ${SAVE_CACHE_SIZE}`);
    try {
      return fn();
    } finally {
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
  }

  /**
   * Writes what changed since the last save in one transaction: new names, new dns_ended rows,
   * and the dns_state rows of changed keys, everything in key order. After an error nothing is
   * written and this machine no longer matches the database: discard it.
   */
  save(): SaveResult {
    const plan = this.prepareSave();
    const mode = plan.result.mode;
    this.withSaveCache(() => {
      this.db.transaction(() => {
        this.writeNamesAndEnded(plan);
        if (mode === 'none') return;
        if (mode === 'rewrite') this.db.prepare(`DELETE FROM dns_state`).run();
        plan.result.states = writeStateRows(
          this.db,
          this.view(),
          plan.order,
          mode === 'rewrite',
          mode === 'replace',
        );
        this.step(plan, 'states');
      })();
      this.step(plan, 'commit');
    });
    return this.finishSave(plan);
  }

  /**
   * save(), with the dns_state rows written by `workers` threads when there are at least
   * `fromRows` of them: each writes its share of the keys (in key order) to a scratch database
   * next to the state (no journal, no sync); meanwhile this thread writes the names and ended
   * rows; then each share is copied in with INSERT … SELECT * (into an emptied dns_state SQLite
   * copies the records as they are). One transaction as in save(); the scratch files are removed.
   * Binding millions of rows costs about 3 µs each in one thread; this spreads it over the CPUs.
   */
  async saveInParallel(workers: number, fromRows = PARALLEL_SAVE_ROWS): Promise<SaveResult> {
    if (workers < 1 || this.dirtyCount < fromRows || this.db.memory) return this.save();
    const plan = this.prepareSave();
    const rewrite = plan.result.mode === 'rewrite';
    const view = this.view();
    const base = this.db.name;
    const url = new URL(`./dns-save-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    const parts = Array.from({ length: workers }, (_, i) => {
      const from = Math.floor((plan.order.length * i) / workers);
      const to = Math.floor((plan.order.length * (i + 1)) / workers);
      return {
        file: `${base}.dns-save-${i}`,
        order: plan.order.slice(from, to),
        worker: null as Worker | null,
      };
    });
    const attached: string[] = [];
    let began = false;
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    try {
      const done = parts.map((part) => {
        const worker = new Worker(url, {
          workerData: { file: part.file, view, order: part.order, all: rewrite },
        });
        part.worker = worker;
        const messages: Array<{ ready?: boolean; written?: number }> = [];
        let wake: (() => void) | null = null;
        let failure: Error | null = null;
        worker.on('message', (m: { ready?: boolean; written?: number }) => {
          messages.push(m);
          wake?.();
        });
        worker.on('error', (error) => {
          failure = error;
          wake?.();
        });
        worker.on('exit', (code) => {
          failure ??= new Error(`dns save worker exited with code ${code}`);
          wake?.();
        });
        const next = async (): Promise<{ ready?: boolean; written?: number }> => {
          while (messages.length === 0) {
            if (failure) throw failure;
            await new Promise<void>((resolve) => (wake = resolve));
          }
          return messages.shift()!;
        };
        return next;
      });
      // Each worker has created its scratch table: attach them, then let them write.
      for (const next of done) await next();
      for (let i = 0; i < parts.length; i++) {
        this.db.prepare(`ATTACH DATABASE ? AS dns_save_${i}`).run(parts[i]!.file);
        attached.push(`dns_save_${i}`);
      }
      this.db.pragma(`cache_size = ${SAVE_CACHE_SIZE}`);
      this.db.exec('BEGIN');
      began = true;
      for (const part of parts) part.worker!.postMessage('write');
      this.writeNamesAndEnded(plan);
      for (const next of done) plan.result.states += (await next()).written!;
      if (rewrite) this.db.prepare(`DELETE FROM dns_state`).run();
      for (const name of attached) {
        this.db.exec(
          `INSERT ${rewrite ? '' : 'OR REPLACE '}INTO main.dns_state SELECT * FROM ${name}.dns_state`,
        );
      }
      this.step(plan, 'states');
      this.db.exec('COMMIT');
      began = false;
      this.step(plan, 'commit');
      plan.result.partitions = parts.length;
    } finally {
      if (began) this.db.exec('ROLLBACK');
      this.db.pragma(`cache_size = ${cacheSize}`);
      for (const name of attached) this.db.exec(`DETACH DATABASE ${name}`);
      await Promise.all(parts.map((part) => part.worker?.terminate()));
      for (const part of parts) {
        for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(part.file + suffix, { force: true });
      }
    }
    return this.finishSave(plan);
  }
}

/** A save under way (prepareSave). */
interface SavePlan {
  started: number;
  /** New name indexes in id order. */
  fresh: Int32Array;
  /** All name indexes in id order. */
  order: Int32Array;
  result: SaveResult;
  /** When the current step began. */
  mark: number;
}
