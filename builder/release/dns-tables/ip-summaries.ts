/**
 * ip_summary: per address the summary of the IP lookup's `domains` block, computed from the
 * intervals (summarizeIps) and written a chunk of addresses at a time (writeIpSummaries). The
 * main thread writes the first addresses into the release, the worker thread the last
 * IP_SUMMARY_WORKER_SHARE of them into its file (their keys are greater: the main thread's copy
 * appends them), at the end of its work, where it waited for the main thread before.
 */
import type Database from 'better-sqlite3';
import { RowWriter } from '../../row-writer.js';
import { currentDomains, type IntervalArrays } from './intervals.js';
import { PackedText } from './packed-text.js';

/** Addresses per IpSummaries: a few MB each, written and dropped one after another. */
export const IP_SUMMARY_CHUNK = 1 << 18;

/**
 * The share of the addresses whose summaries the worker thread writes: on the full-scale bench
 * the worker ended about 5 s before the main thread (by the sums of the phase times), and the
 * summaries took the main thread 10-13 s (docs/decisions/0022).
 */
export const IP_SUMMARY_WORKER_SHARE = 0.25;

/** The first address (value number) whose summary the worker thread writes. */
export function workerSummariesFrom(count: number): number {
  return Math.floor(count * (1 - IP_SUMMARY_WORKER_SHARE));
}

/** The columns of ip_summary for the addresses [from, to) (value numbers, in byte order). */
export interface IpSummaries {
  from: number;
  to: number;
  currentCount: Int32Array;
  first: Float64Array;
  last: Float64Array;
  /** The sample texts (JSON arrays of up to 10 names), newline-separated (PackedText bytes). */
  samples: Uint8Array;
}

/**
 * Writes the ip_summary rows of the addresses [from, to) (value numbers, in byte order; `value(v)`
 * is the text of v), IP_SUMMARY_CHUNK addresses at a time. `names`: the domain names from id
 * `firstId` on.
 */
export function writeIpSummaries(
  db: Database.Database,
  iv: IntervalArrays,
  byValue: { start: Int32Array; rows: Int32Array },
  from: number,
  to: number,
  value: (v: number) => string,
  names: PackedText,
  firstId: number,
): void {
  const insert = new RowWriter(
    db,
    5,
    (rows) =>
      `INSERT INTO ip_summary (value, current_count, sample, first_observed, last_confirmed) VALUES ${rows}`,
  );
  for (let lo = from; lo < to; lo += IP_SUMMARY_CHUNK) {
    const hi = Math.min(lo + IP_SUMMARY_CHUNK, to);
    const { currentCount, first, last, samples: bytes } = summarizeIps(iv, byValue, lo, hi, names, firstId);
    const samples = new PackedText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    for (let v = lo; v < hi; v++)
      insert.row(value(v), currentCount[v - lo], samples.get(v - lo), first[v - lo], last[v - lo]);
  }
  insert.flush();
}

/**
 * The columns of ip_summary per value: the number of domains with a current interval on the
 * address, the first 10 of them (by id) as a JSON array of names, and the earliest
 * first_observed and latest last_confirmed of all its intervals.
 */
export function summarizeIps(
  iv: IntervalArrays,
  byValue: { start: Int32Array; rows: Int32Array },
  from: number,
  to: number,
  text: PackedText,
  firstId: number,
): IpSummaries {
  const { start, rows } = byValue;
  const currentCount = new Int32Array(to - from);
  const firstOf = new Float64Array(to - from);
  const lastOf = new Float64Array(to - from);
  // About 30 bytes per address at full scale; grown by half when short.
  let bytes = Buffer.from(new ArrayBuffer((to - from) * 32 + 4096));
  let used = 0;
  const room = (n: number): void => {
    if (used + n <= bytes.length) return;
    const bigger = Buffer.from(new ArrayBuffer(Math.max(Math.ceil(bytes.length * 1.5), used + n)));
    bytes.copy(bigger, 0, 0, used);
    bytes = bigger;
  };
  // Names that JSON.stringify leaves as they are (printable ASCII, no quote or backslash) are
  // copied byte for byte between quotes: no string per name.
  const copy = text.isJsonSafe();
  const ids: number[] = [];
  for (let v = from; v < to; v++) {
    let first = Infinity;
    let last = 0;
    currentDomains(iv, rows, start[v]!, start[v + 1]!, ids);
    for (let r = start[v]!; r < start[v + 1]!; r++) {
      const i = rows[r]!;
      if (iv.first[i]! < first) first = iv.first[i]!;
      if (iv.last[i]! > last) last = iv.last[i]!;
    }
    const n = Math.min(ids.length, 10);
    if (copy) {
      let size = 3;
      for (let k = 0; k < n; k++) size += text.byteLength(ids[k]! - firstId) + 3;
      room(size);
      if (v > from) bytes[used++] = 10; // '\n'
      bytes[used++] = 91; // '['
      for (let k = 0; k < n; k++) {
        if (k > 0) bytes[used++] = 44; // ','
        bytes[used++] = 34; // '"'
        used = text.copyTo(ids[k]! - firstId, bytes, used);
        bytes[used++] = 34;
      }
      bytes[used++] = 93; // ']'
    } else {
      let sample = v > from ? '\n[' : '[';
      for (let k = 0; k < n; k++)
        sample += `${k > 0 ? ',' : ''}${JSON.stringify(text.get(ids[k]! - firstId))}`;
      sample += ']';
      room(sample.length * 3);
      used += bytes.write(sample, used, 'utf8');
    }
    currentCount[v - from] = ids.length;
    firstOf[v - from] = first;
    lastOf[v - from] = last;
  }
  return {
    from,
    to,
    currentCount,
    first: firstOf,
    last: lastOf,
    samples: new Uint8Array(bytes.buffer, 0, used),
  };
}
