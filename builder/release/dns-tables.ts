/**
 * The DNS tables of a release (domain spans, dns_state, dns_interval, ip_summary, domain_hosting
 * and the per-AS observed counts), computed in JavaScript from the state read once.
 *
 * The answer intervals are the dns_ended rows plus one open interval per address of each
 * dns_state row's vals (first_observed = the entry of firsts at the same position,
 * last_confirmed = last_positive). They are read once into typed arrays (addresses interned as
 * numbers that follow their byte order), put in release order (domain id, first_observed, record
 * type, value) by a counting sort on the domain id and a small sort per domain, then written in
 * that order: dns_interval only ever appends, and no SQL sort of millions of rows is needed. The
 * per-address pass (ip_summary, observed counts) is a second counting sort, on the value.
 */
import type Database from 'better-sqlite3';
import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null = null;

/**
 * A full garbage collection now. After a phase that leaves hundreds of MB of garbage (the ASN
 * mapping, reading the intervals), V8 would otherwise keep it while the next phase works in SQLite
 * without allocating, and the peak RSS of the two threads adds up; the release budget is 1.5 GB.
 */
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

/** Rows per multi-row INSERT statement. */
const ROWS_PER_STATEMENT = 128;
/** Rows fetched per query when a big table is read (texts of that many rows in one string). */
const READ_ROWS = 16384;

/** Batches rows into multi-row INSERT statements. */
export class BatchInsert {
  private readonly values: unknown[];
  private n = 0;
  private readonly many: Database.Statement;
  private readonly one: Database.Statement;
  written = 0;

  constructor(
    db: Database.Database,
    private readonly columns: number,
    sql: (rows: string) => string,
  ) {
    const row = `(${new Array<string>(columns).fill('?').join(',')})`;
    this.many = db.prepare(sql(new Array<string>(ROWS_PER_STATEMENT).fill(row).join(',')));
    this.one = db.prepare(sql(row));
    this.values = new Array<unknown>(columns * ROWS_PER_STATEMENT);
  }

  /** Adds one row: exactly `columns` values. */
  row(...values: unknown[]): void {
    const at = this.n * this.columns;
    for (let i = 0; i < this.columns; i++) this.values[at + i] = values[i];
    this.written++;
    if (++this.n === ROWS_PER_STATEMENT) {
      this.many.run(...this.values);
      this.n = 0;
    }
  }

  flush(): void {
    for (let r = 0; r < this.n; r++)
      this.one.run(...this.values.slice(r * this.columns, (r + 1) * this.columns));
    this.n = 0;
  }
}

/**
 * Many short texts as bytes in one buffer (newline-separated) with their offsets: a fraction of
 * the memory of as many strings, and shareable between threads.
 */
export class PackedText {
  readonly length: number;
  private readonly offsets: Uint32Array;
  /** No byte above 127: read back without UTF-8 decoding. */
  private readonly ascii: boolean;

  constructor(
    readonly bytes: Buffer,
    ascii?: boolean,
  ) {
    let n = 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) n++;
    this.length = bytes.length === 0 ? 0 : n + 1;
    const offsets = new Uint32Array(this.length + 1);
    let k = 1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) offsets[k++] = i + 1;
    offsets[this.length] = bytes.length + 1;
    this.offsets = offsets;
    if (ascii === undefined) {
      let all = 0;
      for (let i = 0; i < bytes.length; i++) all |= bytes[i]!;
      ascii = all < 128;
    }
    this.ascii = ascii;
  }

  /** Texts without newlines, joined into shared memory. */
  static of(texts: string[]): PackedText {
    const text = texts.join('\n');
    const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(text)));
    const written = bytes.write(text, 0, 'utf8');
    return new PackedText(bytes, written === text.length);
  }

  /** Bytes of text i. */
  byteLength(i: number): number {
    return this.offsets[i + 1]! - 1 - this.offsets[i]!;
  }

  /** Copies the bytes of text i into target at `at`; returns the position after them. */
  copyTo(i: number, target: Uint8Array, at: number): number {
    const { bytes } = this;
    const end = this.offsets[i + 1]! - 1;
    for (let k = this.offsets[i]!; k < end; k++) target[at++] = bytes[k]!;
    return at;
  }

  /** Whether JSON.stringify leaves every text as it is, between quotes (printable ASCII, no " or \\). */
  isJsonSafe(): boolean {
    const { bytes } = this;
    for (let k = 0; k < bytes.length; k++) {
      const c = bytes[k]!;
      if (c === 10) continue; // the separator
      if (c < 32 || c > 126 || c === 34 || c === 92) return false;
    }
    return true;
  }

  get(i: number): string {
    const start = this.offsets[i]!;
    const end = this.offsets[i + 1]! - 1;
    return this.ascii
      ? (this.bytes as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end)
      : this.bytes.toString('utf8', start, end);
  }
}

/** The answer intervals of the release in dns_interval order (row i has id i + 1). */
export interface Intervals extends IntervalArrays {
  /** Distinct addresses in byte (SQLite BINARY) order. */
  values: string[];
}

/** The columns of Intervals. */
export interface IntervalArrays {
  count: number;
  domain: Int32Array;
  /** Index in `values`. */
  value: Int32Array;
  /** 1 = AAAA, 0 = A. */
  aaaa: Uint8Array;
  first: Float64Array;
  last: Float64Array;
  /** NaN = null (current). */
  ended: Float64Array;
}

class Growable {
  domain = new Int32Array(1 << 16);
  value = new Int32Array(1 << 16);
  aaaa = new Uint8Array(1 << 16);
  first = new Float64Array(1 << 16);
  last = new Float64Array(1 << 16);
  ended = new Float64Array(1 << 16);
  count = 0;

  push(domain: number, value: number, aaaa: number, first: number, last: number, ended: number): void {
    if (this.count === this.domain.length) {
      const size = Math.ceil(this.count * 1.5);
      const grow = <T extends Int32Array | Uint8Array | Float64Array>(a: T, b: T): T => {
        b.set(a);
        return b;
      };
      this.domain = grow(this.domain, new Int32Array(size));
      this.value = grow(this.value, new Int32Array(size));
      this.aaaa = grow(this.aaaa, new Uint8Array(size));
      this.first = grow(this.first, new Float64Array(size));
      this.last = grow(this.last, new Float64Array(size));
      this.ended = grow(this.ended, new Float64Array(size));
    }
    const i = this.count++;
    this.domain[i] = domain;
    this.value[i] = value;
    this.aaaa[i] = aaaa;
    this.first[i] = first;
    this.last[i] = last;
    this.ended[i] = ended;
  }
}

function rtypeBit(rtype: string): number {
  if (rtype === 'A') return 0;
  if (rtype === 'AAAA') return 1;
  throw new Error(`unknown record type ${JSON.stringify(rtype)} in the DNS state`);
}

/**
 * dns_name id -> domain id (0 = the name has no domain), from the domain table already written.
 */
export function readNameMap(db: Database.Database): Int32Array {
  const maxId = (db.prepare(`SELECT coalesce(max(id), 0) FROM st.dns_name`).pluck().get() as number) ?? 0;
  const map = new Int32Array(maxId + 1);
  const chunk = db.prepare(
    `SELECT count(*), max(nid), group_concat(nid || ',' || did) FROM (
       SELECT n.id AS nid, d.id AS did FROM st.dns_name n JOIN domain d ON d.name = n.name
       WHERE n.id > ? ORDER BY n.id LIMIT ${READ_ROWS * 4})`,
  );
  let after = -1;
  for (;;) {
    const [count, last, text] = chunk.raw().get(after) as [number, number | null, string | null];
    if (count === 0) break;
    const pairs = JSON.parse(`[${text!}]`) as number[];
    for (let i = 0; i < pairs.length; i += 2) map[pairs[i]!] = pairs[i + 1]!;
    after = last!;
  }
  return map;
}

/** Reads every interval of the state and puts them in release order. */
export function readIntervals(db: Database.Database, nameToDomain: Int32Array, shared = false): Intervals {
  const rows = new Growable();
  const numbers = new ValueNumbers();
  const domainOf = (nameId: number): number => (nameId < nameToDomain.length ? nameToDomain[nameId]! : 0);

  const ended = db.prepare(
    `SELECT name_id, rtype, value, first_observed, last_confirmed, ended_at FROM st.dns_ended`,
  );
  for (const r of ended.raw().iterate() as IterableIterator<
    [number, string, string, number, number, number]
  >) {
    const domain = domainOf(r[0]);
    if (domain === 0) continue;
    rows.push(domain, numbers.of(r[2]), rtypeBit(r[1]), r[3], r[4], r[5]);
  }

  // dns_state, READ_ROWS rows per query, their columns joined into three strings by SQLite.
  const states = db.prepare(
    `SELECT count(*), max(name_id),
       group_concat(name_id || ',' || CASE rtype WHEN 'A' THEN 0 WHEN 'AAAA' THEN 1 ELSE -1 END
         || ',' || ifnull(last_positive, 'null'), ','),
       group_concat(vals, ','), group_concat(firsts, ',')
     FROM (SELECT name_id, rtype, vals, firsts, last_positive FROM st.dns_state
           WHERE name_id > ? AND name_id <= ? AND vals <> '[]')`,
  );
  const maxName = nameToDomain.length - 1;
  const step = READ_ROWS / 2;
  let from = db.prepare(`SELECT coalesce(min(name_id), 1) - 1 FROM st.dns_state`).pluck().get() as number;
  const maxState = db.prepare(`SELECT coalesce(max(name_id), 0) FROM st.dns_state`).pluck().get() as number;
  for (; from < maxState; from += step) {
    const [count, , head, valsText, firstsText] = states.raw().get(from, from + step) as [
      number,
      number | null,
      string | null,
      string | null,
      string | null,
    ];
    if (count === 0) continue;
    const head3 = JSON.parse(`[${head!}]`) as Array<number | null>;
    const firsts = JSON.parse(`[${firstsText!}]`) as number[][];
    // The vals arrays are scanned in place, not parsed: each address is numbered straight from
    // the text (JSON.parse made a string of each of the millions of addresses, to look it up).
    const vals = new JsonArraysOfText(valsText!);
    for (let i = 0; i < count; i++) {
      const nameId = head3[i * 3]!;
      const aaaa = head3[i * 3 + 1]!;
      if (aaaa < 0) throw new Error(`dns_state row of name id ${nameId} has an unknown record type`);
      const domain = nameId <= maxName ? nameToDomain[nameId]! : 0;
      if (domain === 0) {
        vals.next(null);
        continue;
      }
      const positive = head3[i * 3 + 2];
      if (positive === null || positive === undefined)
        throw new Error(`dns_state row of name id ${nameId} has addresses but no last_positive`);
      const v = vals.next(numbers);
      const f = firsts[i]!;
      const n = Math.min(v.length, f.length);
      for (let j = 0; j < n; j++) rows.push(domain, v[j]!, aaaa, f[j]!, positive, NaN);
    }
    vals.end();
  }

  // Value numbers in byte order (the addresses are ASCII: JavaScript's order is SQLite's).
  const values = sortAscii(numbers.texts());
  const rank = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) rank[numbers.of(values[i]!)] = i;
  numbers.clear();
  for (let i = 0; i < rows.count; i++) rows.value[i] = rank[rows.value[i]!]!;

  const n = rows.count;
  const order = releaseOrder(rows);
  // Each column: gathered into an array of the exact size (in shared memory when another thread
  // reads it too) in release order, the growable one dropped: one spare column at a time. A
  // gather reads at random and writes in order; following the permutation's cycles in place
  // reads and writes at random and was ten times slower.
  const buffer = (bytes: number) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  const sorted = <T extends Int32Array | Uint8Array | Float64Array>(column: T, exact: T): T => {
    for (let k = 0; k < n; k++) exact[k] = column[order[k]!]!;
    return exact;
  };
  const empty = new Float64Array(0);
  const domainSorted = sorted(rows.domain, new Int32Array(buffer(n * 4)));
  rows.domain = new Int32Array(0);
  const valueSorted = sorted(rows.value, new Int32Array(buffer(n * 4)));
  rows.value = new Int32Array(0);
  const aaaaSorted = sorted(rows.aaaa, new Uint8Array(buffer(n)));
  rows.aaaa = new Uint8Array(0);
  const firstSorted = sorted(rows.first, new Float64Array(buffer(n * 8)));
  rows.first = empty;
  const lastSorted = sorted(rows.last, new Float64Array(buffer(n * 8)));
  rows.last = empty;
  const endedSorted = sorted(rows.ended, new Float64Array(buffer(n * 8)));
  rows.ended = empty;
  return {
    count: n,
    domain: domainSorted,
    value: valueSorted,
    aaaa: aaaaSorted,
    first: firstSorted,
    last: lastSorted,
    ended: endedSorted,
    values,
  };
}

/**
 * The value of a canonical dotted-quad IPv4 address in text[start, end) (no leading zeros, each
 * part at most 255), or -1 for any other text.
 */
export function canonicalIpv4(text: string, start: number, end: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1; // leading zero
      part = part * 10 + (c - 48);
      if (++digits > 3) return -1;
    } else if (c === 46) {
      if (digits === 0 || part > 255 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else return -1;
  }
  if (digits === 0 || part > 255 || dots !== 3) return -1;
  return value * 256 + part;
}

/** Open addressing: a power-of-two table of 32-bit keys and the numbers stored under them. */
class IntTable {
  bits = 16;
  keys = new Int32Array(1 << 16);
  /** -1: empty slot. */
  values = new Int32Array(1 << 16).fill(-1);
  used = 0;

  /** First slot to probe for a key. */
  slot(key: number): number {
    return Math.imul(key, 0x9e3779b1) >>> (32 - this.bits);
  }

  /** Stores at an empty slot found by probing; grows the table past half full. */
  set(slot: number, key: number, value: number): void {
    this.keys[slot] = key;
    this.values[slot] = value;
    if (++this.used * 2 <= this.keys.length) return;
    const { keys, values } = this;
    this.bits++;
    this.keys = new Int32Array(1 << this.bits);
    this.values = new Int32Array(1 << this.bits).fill(-1);
    const mask = this.keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      if (values[i] === -1) continue;
      let h = this.slot(keys[i]!);
      while (this.values[h] !== -1) h = (h + 1) & mask;
      this.keys[h] = keys[i]!;
      this.values[h] = values[i]!;
    }
  }
}

/**
 * Numbers for address texts, given out in first-seen order, found without making a string of the
 * text looked up: canonical IPv4 addresses by their 32-bit value, other texts (IPv6) by a hash of
 * their characters and a comparison with the stored text.
 */
export class ValueNumbers {
  private ipv4Table = new IntTable();
  private otherTable = new IntTable();
  /** Per number: the IPv4 value, or -1 - k for otherTexts[k]. */
  private ipv4: Float64Array = new Float64Array(1 << 16);
  private otherTexts: string[] = [];
  /** Per other text: its number. */
  private otherIds: number[] = [];
  count = 0;

  of(text: string): number {
    return this.inText(text, 0, text.length);
  }

  /** The number of text[start, end). */
  inText(text: string, start: number, end: number): number {
    const ip = canonicalIpv4(text, start, end);
    if (ip >= 0) {
      const table = this.ipv4Table;
      const key = ip | 0;
      for (let h = table.slot(key); ; h = (h + 1) & (table.keys.length - 1)) {
        const id = table.values[h]!;
        if (id === -1) {
          const added = this.add(ip);
          table.set(h, key, added);
          return added;
        }
        if (table.keys[h] === key) return id;
      }
    }
    let hash = 0x811c9dc5 | 0;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
    const table = this.otherTable;
    const length = end - start;
    for (let h = table.slot(hash); ; h = (h + 1) & (table.keys.length - 1)) {
      const k = table.values[h]!;
      if (k === -1) {
        // A copy, not a slice: a slice would keep the whole chunk of text it is in alive.
        const copy =
          start === 0 && end === text.length ? text : Buffer.from(text.slice(start, end)).toString();
        const added = this.add(-1 - this.otherTexts.length);
        table.set(h, hash, this.otherTexts.length);
        this.otherTexts.push(copy);
        this.otherIds.push(added);
        return added;
      }
      if (table.keys[h] !== hash) continue;
      const stored = this.otherTexts[k]!;
      if (stored.length !== length) continue;
      let same = true;
      for (let i = 0; i < length; i++) {
        if (stored.charCodeAt(i) !== text.charCodeAt(start + i)) {
          same = false;
          break;
        }
      }
      if (same) return this.otherIds[k]!;
    }
  }

  private add(ip: number): number {
    if (this.count === this.ipv4.length) {
      const bigger = new Float64Array(this.count * 2);
      bigger.set(this.ipv4);
      this.ipv4 = bigger;
    }
    this.ipv4[this.count] = ip;
    return this.count++;
  }

  /** The text of each number, in number order. */
  texts(): string[] {
    const texts = new Array<string>(this.count);
    for (let id = 0; id < this.count; id++) {
      const ip = this.ipv4[id]!;
      texts[id] =
        ip < 0
          ? this.otherTexts[-1 - ip]!
          : `${Math.floor(ip / 16777216)}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
    }
    return texts;
  }

  clear(): void {
    this.ipv4Table = new IntTable();
    this.otherTable = new IntTable();
    this.ipv4 = new Float64Array(0);
    this.otherTexts = [];
    this.otherIds = [];
  }
}

/**
 * Reads `[…],[…],…` (group_concat of JSON arrays of strings) one array at a time, numbering the
 * strings without making a string of each.
 */
export class JsonArraysOfText {
  private at = 0;
  private readonly ids: number[] = [];

  constructor(private readonly text: string) {}

  /** The numbers of the next array's strings (null: skip it); the array returned is reused. */
  next(numbers: ValueNumbers | null): number[] {
    const { text } = this;
    const ids = this.ids;
    ids.length = 0;
    let i = this.skipSpace(this.at);
    if (i < text.length && text.charCodeAt(i) === 44 && i > 0) i = this.skipSpace(i + 1); // ','
    if (text.charCodeAt(i) !== 91) throw this.error(i, "'['");
    i = this.skipSpace(i + 1);
    if (text.charCodeAt(i) === 93) {
      this.at = i + 1;
      return ids;
    }
    for (;;) {
      if (text.charCodeAt(i) !== 34) throw this.error(i, 'a string');
      const start = i + 1;
      let end = start;
      let escaped = false;
      for (; end < text.length; end++) {
        const c = text.charCodeAt(end);
        if (c === 34) break;
        if (c === 92) {
          escaped = true;
          end++;
        }
      }
      if (end >= text.length) throw this.error(start, 'the end of a string');
      if (numbers) {
        if (escaped) ids.push(numbers.of(JSON.parse(text.slice(start - 1, end + 1)) as string));
        else ids.push(numbers.inText(text, start, end));
      }
      i = this.skipSpace(end + 1);
      const c = text.charCodeAt(i);
      if (c === 93) break;
      if (c !== 44) throw this.error(i, "',' or ']'");
      i = this.skipSpace(i + 1);
    }
    this.at = i + 1;
    return ids;
  }

  /** Throws unless everything was read. */
  end(): void {
    if (this.skipSpace(this.at) !== this.text.length) throw this.error(this.at, 'the end');
  }

  private skipSpace(i: number): number {
    const { text } = this;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
    return i;
  }

  private error(at: number, expected: string): Error {
    return new Error(
      `dns_state vals: expected ${expected} at ${JSON.stringify(this.text.slice(at, at + 40))}`,
    );
  }
}

const NOT_ASCII = new Error('not ASCII');

/**
 * Sorts ASCII strings in byte order (JavaScript's `<` on them; SQLite's BINARY collation), in
 * place: an MSD radix sort on the character codes, insertion sort for small buckets. 2.6M
 * addresses: 3 s on a busy machine, where Array.prototype.sort took 7.5 s.
 */
export function sortAscii(texts: string[]): string[] {
  const scratch = new Array<string>(texts.length);
  // Per depth: counts, then bucket starts, of code + 1 (0: the text ends before this depth).
  const counts: Int32Array[] = [];
  const codes = new Uint8Array(texts.length);
  const radix = (lo: number, hi: number, depth: number): void => {
    if (hi - lo < 48) {
      for (let i = lo + 1; i < hi; i++) {
        const x = texts[i]!;
        let j = i - 1;
        while (j >= lo && texts[j]! > x) {
          texts[j + 1] = texts[j]!;
          j--;
        }
        texts[j + 1] = x;
      }
      return;
    }
    const count = (counts[depth] ??= new Int32Array(130));
    count.fill(0);
    let min = 129;
    let max = 0;
    for (let i = lo; i < hi; i++) {
      const t = texts[i]!;
      const c = depth < t.length ? t.charCodeAt(depth) + 1 : 0;
      if (c > 128) throw NOT_ASCII;
      codes[i] = c;
      count[c + 1]!++;
      if (c < min) min = c;
      if (c > max) max = c;
    }
    if (min === max) {
      if (min !== 0) radix(lo, hi, depth + 1);
      return;
    }
    for (let c = min; c <= max; c++) count[c + 1]! += count[c]!;
    // count[c] is now where bucket c starts (relative to lo); move, then recurse per bucket.
    for (let i = lo; i < hi; i++) scratch[lo + count[codes[i]!]!++] = texts[i]!;
    for (let i = lo; i < hi; i++) texts[i] = scratch[i]!;
    // After the move count[c] is where bucket c ends.
    let a = lo + (min === 0 ? count[0]! : 0);
    for (let c = Math.max(min, 1); c <= max; c++) {
      const b = lo + count[c]!;
      if (b - a > 1) radix(a, b, depth + 1);
      a = b;
    }
  };
  try {
    radix(0, texts.length, 0);
  } catch (error) {
    if (error !== NOT_ASCII) throw error;
    // UTF-16 order is byte order only for ASCII; addresses always are, other texts get a sort
    // that at least never fails.
    texts.sort();
  }
  return texts;
}

/**
 * Positions of the rows in release order: a counting sort on the domain id, then (first_observed,
 * record type, value) within a domain.
 */
function releaseOrder(rows: Growable): Int32Array {
  const n = rows.count;
  let maxDomain = 0;
  for (let i = 0; i < n; i++) if (rows.domain[i]! > maxDomain) maxDomain = rows.domain[i]!;
  const start = new Int32Array(maxDomain + 2);
  for (let i = 0; i < n; i++) start[rows.domain[i]! + 1]!++;
  for (let d = 1; d < start.length; d++) start[d]! += start[d - 1]!;
  const order = new Int32Array(n);
  const at = start.slice();
  for (let i = 0; i < n; i++) order[at[rows.domain[i]!]!++] = i;
  const { first, aaaa, value } = rows;
  const before = (a: number, b: number): boolean =>
    first[a]! < first[b]! ||
    (first[a] === first[b] && (aaaa[a]! < aaaa[b]! || (aaaa[a] === aaaa[b] && value[a]! < value[b]!)));
  for (let d = 1; d <= maxDomain; d++) {
    const lo = start[d]!;
    const hi = start[d + 1]!;
    if (hi - lo < 2) continue;
    if (hi - lo > 32) {
      const part = Array.from(order.subarray(lo, hi)).sort((a, b) =>
        before(a, b) ? -1 : before(b, a) ? 1 : 0,
      );
      order.set(part, lo);
      continue;
    }
    for (let i = lo + 1; i < hi; i++) {
      const x = order[i]!;
      let j = i - 1;
      while (j >= lo && before(x, order[j]!)) {
        order[j + 1] = order[j]!;
        j--;
      }
      order[j + 1] = x;
    }
  }
  return order;
}

/** Appends the intervals to dns_interval (ids 1..count) and sets the domains' interval spans. */
export function writeIntervals(db: Database.Database, iv: Intervals): void {
  const insert = new BatchInsert(
    db,
    6,
    (rows) =>
      `INSERT INTO dns_interval (domain_id, rtype, value, first_observed, last_confirmed, ended_at)
       SELECT column1, CASE column2 WHEN 1 THEN 'AAAA' ELSE 'A' END, column3, column4, column5, column6
       FROM (VALUES ${rows})`,
  );
  const { domain, value, aaaa, first, last, ended, values } = iv;
  for (let i = 0; i < iv.count; i++) {
    const e = ended[i]!;
    insert.row(domain[i], aaaa[i], values[value[i]!], first[i], last[i], e === e ? e : null);
  }
  insert.flush();
  // 128 domains per UPDATE statement: one statement per domain spent more in the calls than in
  // the updates.
  const span = new BatchInsert(
    db,
    3,
    (rows) =>
      `UPDATE domain SET interval_lo = v.column2, interval_hi = v.column3 FROM (VALUES ${rows}) AS v
       WHERE domain.id = v.column1`,
  );
  for (let i = 0; i < iv.count;) {
    const d = domain[i]!;
    let j = i + 1;
    while (j < iv.count && domain[j] === d) j++;
    span.row(d, i + 1, j);
    i = j;
  }
  span.flush();
}

/**
 * The intervals of each address, in (domain id, first_observed, …) order: `rows` lists interval
 * indexes grouped by value, `start[v]..start[v + 1]` those of value v.
 */
export function intervalsByValue(
  iv: IntervalArrays,
  valueCount: number,
): { start: Int32Array; rows: Int32Array } {
  const start = new Int32Array(valueCount + 1);
  for (let i = 0; i < iv.count; i++) start[iv.value[i]! + 1]!++;
  for (let v = 1; v < start.length; v++) start[v]! += start[v - 1]!;
  const at = start.slice();
  const rows = new Int32Array(iv.count);
  for (let i = 0; i < iv.count; i++) rows[at[iv.value[i]!]!++] = i;
  return { start, rows };
}
