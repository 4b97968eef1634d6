/**
 * The answer intervals of a release (dns_interval), computed in JavaScript from the state read
 * once.
 *
 * The intervals are the dns_ended rows plus one open interval per address of each dns_state
 * row's vals (first_observed = the entry of firsts at the same position, last_confirmed =
 * last_positive). They are read once into typed arrays (addresses interned as numbers that follow
 * their byte order), put in release order (domain id, first_observed, record type, value) by a
 * counting sort on the domain id and a small sort per domain, then written in that order:
 * dns_interval only ever appends, and no SQL sort of millions of rows is needed. The per-address
 * pass (ip_summary, observed counts) is a second counting sort, on the value.
 */
import type Database from 'better-sqlite3';
import { RowWriter } from '../../row-writer.js';
import { JsonArraysOfText } from './json-arrays.js';
import { sortAscii } from './sort-ascii.js';
import { ValueNumbers } from './value-numbers.js';

/** Rows fetched per query when a big table is read (texts of that many rows in one string). */
export const READ_ROWS = 16384;

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

/** Appends the intervals to dns_interval (ids 1..count); the domains' spans are in domain_page (domain-pages.ts). */
export function writeIntervals(db: Database.Database, iv: Intervals): void {
  const insert = new RowWriter(
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

/** Domain ids (ascending, distinct) with a current interval among rows[from, to) of one value. */
export function currentDomains(
  iv: IntervalArrays,
  rows: Int32Array,
  from: number,
  to: number,
  ids: number[],
): void {
  ids.length = 0;
  for (let r = from; r < to; r++) {
    const i = rows[r]!;
    const e = iv.ended[i]!;
    // Rows of a value come in domain order: a repeated domain is the previous one.
    if (e !== e && ids[ids.length - 1] !== iv.domain[i]) ids.push(iv.domain[i]!);
  }
}
