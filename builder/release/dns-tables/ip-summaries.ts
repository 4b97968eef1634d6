/**
 * ip_summary: per address the summary of the IP lookup's `domains` block. The worker thread
 * computes the columns from the intervals (summarizeIps) and posts them in chunks; the main
 * thread writes them (writeIpSummary).
 */
import type Database from 'better-sqlite3';
import { RowWriter } from '../../row-writer.js';
import { currentDomains, type IntervalArrays } from './intervals.js';
import { PackedText } from './packed-text.js';

/**
 * The columns of ip_summary for the addresses [from, to) (value numbers, in byte order), which the
 * worker computes from the intervals and posts in chunks (the buffers transferred) before it
 * writes the hosting runs.
 */
/** Addresses per IpSummaries: a few MB each, written and dropped one after another. */
export const IP_SUMMARY_CHUNK = 1 << 18;

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
 * Per address the summary of the IP lookup's `domains` block; addresses in byte order, their
 * columns as the worker posts them (`next(k)`: the chunk after k chunks).
 */
export function writeIpSummary(
  db: Database.Database,
  values: string[],
  next: (k: number) => IpSummaries,
): void {
  const insert = new RowWriter(
    db,
    5,
    (rows) =>
      `INSERT INTO ip_summary (value, current_count, sample, first_observed, last_confirmed) VALUES ${rows}`,
  );
  for (let v = 0, k = 0; v < values.length; k++) {
    const { from, to, currentCount, first, last, samples: bytes } = next(k);
    const samples = new PackedText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    if (from !== v || samples.length !== to - from) throw new Error(`ip summaries ${from}..${to} at ${v}`);
    for (; v < to; v++)
      insert.row(values[v], currentCount[v - from], samples.get(v - from), first[v - from], last[v - from]);
  }
  insert.flush();
}

/**
 * The columns of ip_summary per value (run by the worker thread): the number of domains with a
 * current interval on the address, the first 10 of them (by id) as a JSON array of names, and
 * the earliest first_observed and latest last_confirmed of all its intervals.
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
